"""The machine layer: CPUs, shared memory, turns, accounting and traps.

It knows architectures (through :mod:`arches`) and nothing of
instrumentation.
"""
from sim.errors import AsmError, ConfigError, GuestFault
from sim.machine import MAX_CPUS, UNHANDLED, Cpu, Machine, Trap

__all__ = ["AsmError", "ConfigError", "Cpu", "GuestFault", "MAX_CPUS", "Machine",
           "Trap", "UNHANDLED"]

"""Boot-time conversion of the mcount call sites: the kernel's own ftrace_init.

In Linux (2.6.28 ``kernel/trace/ftrace.c``), ``start_kernel`` calls
``ftrace_init`` on the boot CPU before SMP bring-up: it walks the
``__mcount_loc`` table the build linked in (``__start_mcount_loc`` ..
``__stop_mcount_loc``, one address per entry) and rewrites every call to
the compiler's mcount as the arch's nop with ``ftrace_modify_code``:
compare the bytes found with the expected call, store, flush the
instruction cache. No other CPU runs yet, so no cross-CPU protocol is
needed. A site that does not hold the call is ``ftrace_bug``: it warns and
kills ftrace (``ftrace_kill``), ``ftrace_update_code`` converts nothing
after it, and the kernel boots on with ftrace disabled; the sites not
converted still call mcount, which returns at once.

This is part of booting the guest, so :class:`sim.guest.Guest` does it
whenever the image was built with ``CONFIG_DYNAMIC_FTRACE`` (it defines
the arch's ``FTRACE_ADDR``, ``ftrace_caller``, which the entry code
assembles only then, as 2.6.28's ``entry_64.S``). Enabling sites later is
the patcher's job (:mod:`patcher.ftrace`), through the arch's cross-CPU
protocol. Encodings come from the arch's ``dynamic_ftrace`` capability
(``ArchOps.ftrace_nop_replace`` / ``ftrace_call_replace``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

from arches.base import icache_lines
from sim.elf import Image
from sim.errors import ConfigError
from sim.machine import Machine

CAPABILITY = "dynamic_ftrace"


class FtraceBug(ConfigError):
    """A site that does not hold what ftrace_modify_code expects (the kernel's ftrace_bug)."""


@dataclass
class InitStats:
    """What boot-time conversion did."""

    sites: int                 # converted to the nop
    seconds: float             # host time
    modeled_cycles: float      # charged to the boot CPU (flushes, its serialization)
    #: ftrace_bug's report of the site that could not be converted, which killed
    #: ftrace (None: every site was converted)
    bug: str | None = None

    def to_json(self) -> dict:
        return {"sites": self.sites, "host_seconds": round(self.seconds, 6),
                "modeled_cycles": self.modeled_cycles, "ftrace_bug": self.bug}


def has_dynamic_ftrace(image: Image, machine: Machine) -> bool:
    """Whether the image was built with CONFIG_DYNAMIC_FTRACE for an arch that has it."""
    arch = machine.arch
    return (CAPABILITY in arch.capabilities and arch.ops.FTRACE_ADDR in image.symbols
            and "__start_mcount_loc" in image.symbols)


def mcount_loc(machine: Machine, image: Image) -> list[int]:
    """The call-site addresses in ``__mcount_loc``, read from guest memory as the kernel does."""
    start, stop = image.symbols["__start_mcount_loc"], image.symbols["__stop_mcount_loc"]
    return machine.read_words(start, max(stop - start, 0) // machine.arch.word)


def ftrace_modify_code(machine: Machine, ip: int, old: bytes, new: bytes) -> None:
    """Compare the site with ``old`` (FtraceBug if different), then store ``new``.

    The early form: the caller holds ``text_mutex``, then hands the written
    lines to the coherence model and flushes; nothing else runs.
    """
    found = machine.read(ip, len(old))
    if found != old:
        raise FtraceBug(f"ftrace failed to modify {ip:#x}: expected {old.hex(':')} "
                        f"actual: {found.hex(':')}")
    machine.memory.write(ip, new)


def ftrace_init(machine: Machine, sites: Sequence[int], mcount_addr: int) -> InitStats:
    """Convert every call site to the arch's nop on the boot CPU, before any CPU runs.

    Each site must hold ``ftrace_call_replace(ip, mcount_addr)``; the
    written lines are flushed on CPU 0 (charged to it) and CPU 0
    serializes once. The first site that does not hold the call stops the
    conversion (2.6.28 ``ftrace_update_code`` bails once ``ftrace_bug`` has
    killed ftrace): it and the sites after it keep their calls, and
    :attr:`InitStats.bug` says why. :class:`ConfigError` once a CPU has run.
    """
    if machine.total_instructions:
        raise ConfigError("ftrace_init must run before the CPUs start")
    ops = machine.arch.ops
    boot = machine.cpus[0]
    before = boot.modeled_cycles
    started = time.perf_counter()
    nop = ops.ftrace_nop_replace()
    converted: list[int] = []
    bug = None
    with machine.text_mutex:
        for ip in sites:
            try:
                ftrace_modify_code(machine, ip, ops.ftrace_call_replace(ip, mcount_addr), nop)
            except FtraceBug as err:
                bug = str(err)
                break
            converted.append(ip)
        for begin, end in icache_lines([(ip, ip + len(nop)) for ip in converted],
                                       machine.arch.icache_line):
            machine.write_text(begin, machine.read(begin, end - begin))   # mark the lines
            machine.flush_icache(begin, end, cpu=boot.index)
        machine.sync_cpu(boot.index)
    return InitStats(len(converted), time.perf_counter() - started,
                     boot.modeled_cycles - before, bug)


def boot_convert(machine: Machine, image: Image) -> tuple[list[int], InitStats] | None:
    """ftrace_init over the image's ``__mcount_loc`` if it has dynamic ftrace, else None."""
    if not has_dynamic_ftrace(image, machine):
        return None
    sites = mcount_loc(machine, image)
    return sites, ftrace_init(machine, sites, image.symbols[machine.arch.ops.MCOUNT_ADDR])


__all__ = ["CAPABILITY", "FtraceBug", "InitStats", "boot_convert", "ftrace_init",
           "ftrace_modify_code", "has_dynamic_ftrace", "mcount_loc"]

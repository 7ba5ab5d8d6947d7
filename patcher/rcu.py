"""Grace periods, as classic RCU has them: ``call_rcu`` (kernel/rcu/tree.c).

A CPU is quiescent once it has context-switched (``__switch_to_asm``) or
halted, while it sits in its idle loop (``cpu_idle``: classic RCU counts
the idle task as quiescent), and before it has run at all: kisim's kernel
never holds an RCU-protected pointer across a switch (``__DO_TRACE``, the
kprobe handlers, which run with preemption off), nor in the idle loop. A
callback runs once every CPU that was not quiescent when it was queued has
been quiescent since. A caller that waits in ``synchronize_rcu`` schedules
away, so its own CPU is quiescent at once: it is passed as ``caller``.

The context switch is watched only while a callback waits: a Unicorn code
hook slows every block, not only the watched one (docs/unicorn.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from sim.guest import Guest
from sim.machine import Cpu, Watch


@dataclass
class _Callback:
    func: Callable[[], None]
    waiting: set[int]        # CPUs that have not been quiescent since it was queued


class GracePeriods:
    """The grace periods of one running guest's CPUs."""

    def __init__(self, guest: Guest) -> None:
        self.machine = guest.machine
        self._switch = guest.image.symbols["__switch_to_asm"]
        self._idle = next(((start, start + size) for start, size, name in guest.image.functions
                           if name == "cpu_idle"), (0, 0))
        self._queued: list[_Callback] = []
        self._watch: Watch | None = None
        self.completed = 0

    def call_rcu(self, func: Callable[[], None], caller: int | None = None) -> None:
        """Run ``func`` once every running CPU but ``caller`` has been quiescent."""
        waiting = {c.index for c in self.machine.cpus} - self._quiet() - {caller}
        self._queued.append(_Callback(func, waiting))
        self._advance()
        if self._queued and self._watch is None:
            self._watch = self.machine.watch(self._switch, self._quiescent)

    def _quiescent(self, cpu: Cpu) -> None:
        for callback in self._queued:
            callback.waiting.discard(cpu.index)
        self._advance()

    def _advance(self) -> None:
        """Run the callbacks whose grace period is over, in the order queued."""
        quiet = self._quiet()
        done = [cb for cb in self._queued if not cb.waiting - quiet]
        self._queued = [cb for cb in self._queued if cb.waiting - quiet]
        if not self._queued and self._watch is not None:
            self.machine.unwatch(self._watch)       # a watch slows every block: only while needed
            self._watch = None
        for callback in done:
            callback.func()
            self.completed += 1

    def _quiet(self) -> set[int]:
        """The CPUs in a quiescent state now: not started yet, halted, or in the
        idle loop itself (between turns a CPU's pc is where it goes on)."""
        start, end = self._idle
        return {c.index for c in self.machine.cpus
                if c.halted or not c.instructions or start <= c.pc < end}

    @property
    def watching(self) -> bool:
        """Whether context switches are watched (a grace period is running)."""
        return self._watch is not None

    def pending(self) -> int:
        """Callbacks still waiting for their grace period."""
        self._advance()
        return len(self._queued)


__all__ = ["GracePeriods"]

"""Per-CPU instruction-fetch views: text stores reach other CPUs piece by piece.

The machine's memory is coherent: the patching side, every host access and
every data access see each store at once. Instruction fetch is weaker.
:class:`FetchViews` gives each CPU its own copy of a text range, mapped into
that CPU's Unicorn in place of the shared page, so the CPU executes exactly
what its copy holds. A text store (:meth:`FetchViews.store`) lands in memory
at once and becomes *pending* for every CPU, split into pieces of the arch's
instruction alignment:

- x86 (``insn_align`` 1): each byte separately. Intel SDM vol. 3A §8.1.3
  (cross-modifying code) promises no fetch consistency across a store until
  the executing CPU serializes, so any subset of a multi-byte store may be
  fetched, and a fetch that straddles a 16- or 64-byte boundary is no more
  atomic than that;
- ARM and PowerPC (``insn_align`` 4): each aligned 32-bit word, the unit
  those arches store single-copy atomically (ARM ARM B2.2.1; Power ISA
  Book II §1.4).

Pending pieces reach a CPU at times and in an order drawn from the caller's
seeded RNG (:meth:`drift`). A serialization on a CPU (:meth:`sync`: the IPI
of x86 ``text_poke_sync``, ARM ``stop_machine``, PowerPC ``isync``) makes
pending pieces visible on that CPU: all of them where the arch declares its
instruction fetch coherent with stores (``Arch.icache_coherent``), otherwise
only the pieces whose cache line a flush (:meth:`flush`: ``flush_icache_range``,
``dcbst``/``icbi``) covered after they were stored. A piece whose line was
never flushed may stay stale on that CPU for as long as the run lasts.

Each arriving piece drops the CPU's translated blocks over it
(``ctl_remove_cache``: Unicorn does not notice host writes, DESIGN notes in
docs/patchcheck.md), so a CPU never runs a translation older than its view.
Pieces arrive only between the caller's steps, so one instruction is fetched
from one state of the view; the byte-grain arrival on x86 already covers a
fetch split across a boundary.
"""
from __future__ import annotations

import ctypes
import random

from sim.machine import PAGE, Machine

ARRIVAL = 0.3
"""The chance that one pending piece reaches a CPU at one :meth:`FetchViews.drift`."""
FLUSH_EVERY = 64
"""Resets between two full flushes of Unicorn's translated code (:meth:`FetchViews.reset`)."""

# Where a pending piece stands on an arch whose instruction fetch is not coherent with
# stores: still in the storing CPU's data cache, cleaned to the point of unification
# (dcbst, DCCMVAU), or also invalidated in the instruction caches (icbi, ICIMVAU), so
# that a CPU that serializes fetches it. flush_icache_range does both at once.
STORED, CLEANED, FLUSHED = 0, 1, 2


class FetchViews:
    """Private fetch copies of ``[base, base + size)`` for every CPU of ``machine``."""

    def __init__(self, machine: Machine, base: int, size: int) -> None:
        if base % PAGE or size % PAGE or machine.memory.find(base, size) is None:
            raise ValueError(f"fetch views need mapped whole pages, not {base:#x}+{size:#x}")
        self.machine = machine
        self.base, self.size = base, size
        self.piece = machine.arch.insn_align
        self.coherent = machine.arch.icache_coherent
        self.views = [(ctypes.c_ubyte * size)() for _ in machine.cpus]
        self._bytes = [memoryview(view).cast("B") for view in self.views]
        # Per CPU: piece address -> [bytes to deliver, STORED, CLEANED or FLUSHED]
        self.pending: list[dict[int, list]] = [{} for _ in machine.cpus]
        # Per CPU: piece address -> its bytes before the first store the CPU has not
        # serialized after yet (concurrent modification, for Arch.cmodx_safe)
        self.flux: list[dict[int, bytes]] = [{} for _ in machine.cpus]
        self._resets = 0
        region = machine.memory.find(base, size)
        for cpu, view in zip(machine.cpus, self.views):
            cpu.uc.mem_unmap(base, size)
            cpu.uc.mem_map_ptr(base, size, region.perms, ctypes.addressof(view))
        self.reset()

    def reset(self) -> None:
        """Every view equal to memory, nothing pending, no translation of the views.

        The blocks translated from the views are removed; the others (code
        outside the views, which never changes: the patch checker's guest)
        are kept, which spares their retranslation every seed. Unicorn
        reclaims the space of removed blocks only when its code buffer is
        flushed, so every :data:`FLUSH_EVERY` resets (and the first) flush it
        whole, which bounds the buffer. Which blocks are cached changes
        nothing a CPU executes: the same findings for every seed
        (tests/test_fetch.py).
        """
        data = self.machine.read(self.base, self.size)
        full = self._resets % FLUSH_EVERY == 0
        self._resets += 1
        for cpu, view, pending, flux in zip(self.machine.cpus, self.views, self.pending,
                                            self.flux):
            ctypes.memmove(view, data, self.size)
            pending.clear()
            flux.clear()
            if full:
                cpu.uc.ctl_flush_tb()
            else:
                cpu.uc.ctl_remove_cache(self.base, self.base + self.size)

    def read(self, cpu: int, addr: int, size: int) -> bytes:
        """What CPU ``cpu`` would fetch at ``addr`` now."""
        off = addr - self.base
        if off < 0 or off + size > self.size:
            return self.machine.read(addr, size)
        return self._bytes[cpu][off:off + size].tobytes()

    def covers(self, addr: int) -> bool:
        return self.base <= addr < self.base + self.size

    def store(self, addr: int, data: bytes) -> None:
        """One text store: into memory now, pending for every CPU piece by piece."""
        first = addr - addr % self.piece
        pieces = [p for p in range(first, addr + len(data), self.piece) if self.covers(p)]
        before = {p: self.machine.read(p, self.piece) for p in pieces}
        self.machine.memory.write(addr, data)
        for p in pieces:
            value = self.machine.read(p, self.piece)
            for pending, flux in zip(self.pending, self.flux):
                pending.pop(p, None)             # keep arrival order = store order
                pending[p] = [value, STORED]
                flux.setdefault(p, before[p])

    def _lines(self, begin: int, end: int) -> tuple[int, int]:
        line = self.machine.arch.icache_line
        return begin - begin % line, end + -end % line

    def _advance(self, begin: int, end: int, after: int, state: int,
                 only: frozenset[int] | None = None) -> None:
        begin, end = self._lines(begin, end)
        for pending in self.pending:
            for p, entry in pending.items():
                if begin <= p < end and entry[1] >= after and (only is None or p in only):
                    entry[1] = max(entry[1], state)

    def cleaned(self, begin: int, end: int) -> frozenset[int]:
        """The pieces in the lines of ``[begin, end)`` whose stores a completed clean
        has pushed to where instruction fetch reads (pending for some CPU)."""
        begin, end = self._lines(begin, end)
        return frozenset(p for pending in self.pending for p, (_, state) in pending.items()
                         if begin <= p < end and state == CLEANED)

    def flush(self, begin: int, end: int) -> None:
        """flush_icache_range: pending pieces in the lines of ``[begin, end)`` become
        syncable (the reference core's L1I lines, :attr:`arches.base.Arch.icache_line`)."""
        self._advance(begin, end, STORED, FLUSHED)

    def clean(self, begin: int, end: int) -> None:
        """A data-cache clean of the lines (PowerPC dcbst, ARM DCCMVAU): their stores
        reach the memory instruction fetch reads."""
        self._advance(begin, end, STORED, CLEANED)

    def invalidate(self, begin: int, end: int, only: frozenset[int] | None = None) -> None:
        """An instruction-cache invalidation of the lines, broadcast (PowerPC icbi, ARM
        ICIMVAU): their cleaned pieces (of ``only``, if given: those cleaned when the
        invalidation was issued) become syncable on every CPU."""
        self._advance(begin, end, CLEANED, FLUSHED, only)

    def _arrive(self, cpu: int, p: int, value: bytes) -> None:
        off = p - self.base
        self._bytes[cpu][off:off + len(value)] = value
        self.machine.cpus[cpu].uc.ctl_remove_cache(p, p + len(value))

    def drift(self, cpu: int, rng: random.Random) -> None:
        """Seeded arrivals: each pending piece reaches ``cpu`` with chance :data:`ARRIVAL`."""
        pending = self.pending[cpu]
        if not pending:
            return
        for p in [p for p in pending if rng.random() < ARRIVAL]:
            self._arrive(cpu, p, pending.pop(p)[0])

    def deliver(self, cpu: int, begin: int, end: int) -> None:
        """The flushed pieces of the lines of ``[begin, end)`` pending for ``cpu`` reach
        its fetch now (its instruction cache lost the line: the next fetch reads
        memory). It has not serialized, so they stay changing under it
        (:meth:`changing`)."""
        begin, end = self._lines(begin, end)
        pending = self.pending[cpu]
        for p in [p for p, (_, state) in pending.items() if begin <= p < end and
                  state == FLUSHED]:
            self._arrive(cpu, p, pending.pop(p)[0])

    def sync(self, cpu: int) -> None:
        """``cpu`` serializes: it now fetches every piece it is guaranteed to see, and
        no longer executes those pieces concurrently with their modification."""
        pending = self.pending[cpu]
        for p in [p for p, (_, state) in pending.items()
                  if self.coherent or state == FLUSHED]:
            self._arrive(cpu, p, pending.pop(p)[0])
        flux = self.flux[cpu]
        for p in [p for p in flux if p not in pending]:
            del flux[p]

    def quiesce(self, cpu: int) -> None:
        """``cpu`` did not run while the pieces changed (stop_machine): none of them is
        changing under it any more, delivered or not."""
        self.flux[cpu].clear()

    def changing(self, cpu: int, addr: int, size: int) -> list[tuple[int, bytes, bytes]]:
        """Pieces of ``[addr, addr + size)`` another CPU is changing under ``cpu``:
        (address, bytes before, bytes now), for every piece stored since ``cpu`` last
        serialized with it delivered."""
        flux = self.flux[cpu]
        if not flux:
            return []
        first = addr - addr % self.piece
        return [(p, flux[p], self.machine.read(p, self.piece))
                for p in range(first, addr + size, self.piece) if p in flux]

    def stale(self, cpu: int) -> list[int]:
        """Addresses of the pieces ``cpu`` does not fetch yet."""
        return sorted(self.pending[cpu])


"""Generic text patching: one lock, verify before write, reserved text.

Every change to kernel text goes through :class:`TextPatcher`:

- **One lock.** The machine's :data:`sim.textlock.text_mutex` (kernel/extable.c)
  is held around every text write; :meth:`Machine.write_text` refuses a store
  made without it (:class:`LockNotHeld`).
- **Verify before write.** Each site names the bytes it expects to find; if
  memory holds anything else the whole operation is refused with
  :class:`PatchError` (``EINVAL``) and nothing is written.
- **Reserved text.** A site owned by one mechanism (jump_label, kprobe,
  ftrace, imv, marker) cannot be written by another (``EBUSY``). The
  reservations belong to the machine: every patcher of one machine (the
  kprobe manager's, the static keys', ftrace's) sees the same owners, as
  the kernel's mechanisms all consult one text.
- **Arch protocols.** Live text changes run the arch's ``text_poke_batch``
  hook (x86 text_poke_bp, ARM patch_text, PowerPC patch_instruction; see
  ``arches/*/__init__.py``) through a :class:`MachinePort`. A batch is one
  protocol run whatever its size: three sync rounds on x86 (and one per
  one-byte kprobe site, as arch_arm_kprobe()), one flush and one sync round
  on ARM and PowerPC.

Patching is initiated from the host (``cpu=None``: no CPU pays for the
stores or flushes) or from CPU ``i`` (flushes and the early variant's local
serialization are charged to it). A sync round or a stop_machine() charges
each CPU what v5.10's primitive costs it (:meth:`sim.machine.Machine.sync_all`,
the arch's :class:`~arches.base.TextSync`: x86 an IPI and a sync_core() on every
other CPU; ARM an IPI per other CPU for stop_machine(); PowerPC nothing beyond
the patching CPU's flush).

Usage::

    patcher = TextPatcher(machine)
    patcher.reserve(site, 5, "jump_label")
    patcher.text_poke(site, nop5, jmp, "jump_label")
    with patcher.batch() as b:            # one protocol run for all sites
        for site, old, new in changes:
            b.queue(site, old, new, "jump_label")
"""
from __future__ import annotations

import bisect
import contextlib
import weakref
from typing import Callable, Iterator, Sequence

from arches import EncodingError, TrapKind
from arches.base import BreakpointHandler, OutOfLine, TextPokeBatch, icache_lines
from patcher.errors import PatchError
from sim.errors import ConfigError
from sim.machine import UNHANDLED, Cpu, Machine, Trap, TrapPriority
from sim.textlock import text_mutex  # noqa: F401  (re-exported: the one text lock)

OWNERS = ("jump_label", "kprobe", "ftrace", "imv", "marker")


def _hex(data: bytes) -> str:
    return data.hex(" ") or "(nothing)"


class MachinePort:
    """The :class:`arches.base.TextPort` of a real :class:`Machine`.

    Stores are coalesced for the stale-fetch model: each store lands in
    memory at once, and the ranges written since the last sync are marked
    (through :meth:`Machine.write_text`, merged to icache lines) just
    before the next sync round, which is when the model needs them.
    """

    def __init__(self, machine: Machine, cpu: int | None = None) -> None:
        self.machine = machine
        self.cpu = cpu
        self._written: list[tuple[int, int]] = []

    def read(self, addr: int, size: int) -> bytes:
        return self.machine.read(addr, size)

    def write_text(self, addr: int, data: bytes) -> None:
        self.machine.text_mutex.assert_held(f"text write of {len(data)} bytes at {addr:#x}")
        self.machine.memory.write(addr, data)
        self._written.append((addr, addr + len(data)))

    def write_data(self, addr: int, data: bytes) -> None:
        self.machine.write(addr, data)

    def mark_written(self) -> None:
        """Hand the ranges written so far to the machine's coherence model."""
        for begin, end in icache_lines(self._written, self.machine.arch.icache_line):
            while begin < end:                   # a span may cross into the next mapping
                region = self.machine.memory.find(begin, 1)
                stop = min(end, region.base + region.size)
                self.machine.write_text(begin, self.machine.read(begin, stop - begin))
                begin = stop
        self._written.clear()

    def sync_all(self) -> None:
        self.mark_written()
        self.machine.sync_all(self.cpu)

    def sync_cpu(self, index: int) -> None:
        self.mark_written()
        self.machine.sync_cpu(index)

    def flush_icache(self, begin: int, end: int) -> None:
        self.machine.flush_icache(begin, end, cpu=self.cpu)

    def stop_machine(self, fn: Callable[[], None]) -> None:
        """No guest CPU runs during a host port call: ``fn``, then the CPUs'
        serialization on their way out of the stopper (:meth:`Machine.stop_machine_exit`)."""
        fn()
        self.mark_written()
        self.machine.stop_machine_exit(self.cpu)

    @contextlib.contextmanager
    def breakpoint_handler(self, handler: BreakpointHandler) -> Iterator[None]:
        def on_trap(cpu: Cpu, trap: Trap) -> object:
            if trap.kind is not TrapKind.BREAKPOINT:
                return UNHANDLED
            resume = handler(cpu, trap.address)
            return UNHANDLED if resume is None else resume

        self.machine.add_trap_handler(on_trap, TrapPriority.TEXT_POKE)
        try:
            yield
        finally:
            self.machine.remove_trap_handler(on_trap)


class Reservations:
    """Text ranges owned by one mechanism each (sorted by start address)."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._entries: list[tuple[int, int, str]] = []   # (start, end, owner)
        self._longest = 0

    def overlapping(self, addr: int, length: int) -> list[tuple[int, int, str]]:
        lo = bisect.bisect_left(self._starts, addr - self._longest + 1)
        hi = bisect.bisect_left(self._starts, addr + length)
        return [e for e in self._entries[lo:hi] if e[1] > addr]

    def add(self, addr: int, length: int, owner: str) -> None:
        i = bisect.bisect_right(self._starts, addr)
        self._starts.insert(i, addr)
        self._entries.insert(i, (addr, addr + length, owner))
        self._longest = max(self._longest, length)

    def remove(self, addr: int, owner: str) -> bool:
        lo = bisect.bisect_left(self._starts, addr)
        hi = bisect.bisect_right(self._starts, addr)
        for i in range(lo, hi):
            if self._entries[i][2] == owner:
                del self._starts[i], self._entries[i]
                return True
        return False

    def __iter__(self) -> Iterator[tuple[int, int, str]]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)


#: Each machine's reservations, shared by all its patchers.
_RESERVED: "weakref.WeakKeyDictionary[Machine, Reservations]" = weakref.WeakKeyDictionary()


class Batch:
    """Sites queued under the text lock and applied in one protocol run.

    Entering takes :data:`text_mutex` and leaving releases it. Each
    :meth:`queue` verifies its site at once; a refused site raises there and,
    if the exception leaves the ``with`` block, nothing at all is written.
    """

    def __init__(self, patcher: TextPatcher) -> None:
        self.patcher = patcher
        self.sites: list[tuple[int, bytes]] = []
        self._queued: dict[int, int] = {}

    def __enter__(self) -> Batch:
        self.patcher.machine.text_mutex.acquire()
        return self

    def queue(self, addr: int, expected: bytes, new: bytes, owner: str, *,
              out_of_line: bool = False) -> None:
        """arch_jump_label_transform_queue: verify the site and add it to the batch.

        ``out_of_line``: not a site but code a site leads to (an optprobe's detour),
        handed to the protocol as an :class:`~arches.base.OutOfLine` entry."""
        self.patcher.machine.text_mutex.assert_held("queueing a text patch")
        if addr in self._queued:
            raise PatchError("EINVAL", f"text at {addr:#x} is already queued in this batch")
        self.patcher.verify(addr, expected, new, owner)
        self._queued[addr] = len(new)
        self.sites.append(OutOfLine(addr, bytes(new)) if out_of_line else (addr, bytes(new)))

    def __len__(self) -> int:
        return len(self.sites)

    def __exit__(self, exc_type: type | None, *exc: object) -> None:
        try:
            if exc_type is None and self.sites:
                self.patcher.apply(self.sites)
        finally:
            self.sites = []
            self.patcher.machine.text_mutex.release()


class TextPatcher:
    """Text patching on one machine, initiated from the host or from ``cpu``.

    ``protocol`` replaces the arch's ``text_poke_batch`` hook (the checker
    uses it to run deliberately naive patchers), as does the kernel's own
    when it patches itself (``machine.text_poke``, CONFIG_PATCHING_IN_GUEST:
    :mod:`sim.self_patching`); ``port`` replaces the
    :class:`MachinePort` (the checker's port interleaves CPUs between stores).
    """

    def __init__(self, machine: Machine, cpu: int | None = None, *,
                 port: MachinePort | None = None,
                 protocol: TextPokeBatch | None = None) -> None:
        if cpu is not None and not 0 <= cpu < len(machine.cpus):
            raise ConfigError(f"patching CPU {cpu} out of range 0..{len(machine.cpus) - 1}")
        self.machine = machine
        self.arch = machine.arch
        self.cpu = cpu
        self.port = port if port is not None else MachinePort(machine, cpu)
        self.protocol: TextPokeBatch = (protocol or machine.text_poke
                                        or self.arch.ops.text_poke_batch)
        self.reserved = _RESERVED.setdefault(machine, Reservations())

    @contextlib.contextmanager
    def on_cpu(self, cpu: int) -> Iterator[None]:
        """Patch from ``cpu`` inside the block (a guest module's call: that CPU
        pays the flushes and its share of the sync rounds)."""
        saved = self.cpu, self.port
        self.cpu, self.port = cpu, MachinePort(self.machine, cpu)
        try:
            yield
        finally:
            self.cpu, self.port = saved

    # -- reserved text ----------------------------------------------------
    def reserve(self, addr: int, length: int, owner: str) -> None:
        """Claim ``[addr, addr+length)`` for ``owner``; EBUSY if another owns any of it."""
        _check_owner(owner)
        if length <= 0:
            raise PatchError("EINVAL", f"{owner}: reserving {length} bytes at {addr:#x}")
        with self.machine.text_mutex:
            self._check_free(addr, length, owner)
            self.reserved.add(addr, length, owner)

    def release(self, addr: int, owner: str) -> None:
        """Drop ``owner``'s reservation starting at ``addr``; ENOENT if it has none."""
        _check_owner(owner)
        with self.machine.text_mutex:
            if not self.reserved.remove(addr, owner):
                raise PatchError("ENOENT", f"{owner} holds no text reserved at {addr:#x}")

    def owners(self, addr: int, length: int = 1) -> list[str]:
        """Who holds text overlapping ``[addr, addr+length)``."""
        return [owner for _, _, owner in self.reserved.overlapping(addr, length)]

    def _check_free(self, addr: int, length: int, owner: str) -> None:
        for begin, end, other in self.reserved.overlapping(addr, length):
            if other != owner:
                raise PatchError("EBUSY", f"{owner}: text {addr:#x}+{length} overlaps "
                                          f"{other}'s site {begin:#x}+{end - begin}")

    # -- verification -------------------------------------------------------
    def verify(self, addr: int, expected: bytes, new: bytes, owner: str) -> None:
        """Refuse a site unless ``owner`` may write it and memory holds ``expected``."""
        _check_owner(owner)
        if not new or len(expected) != len(new):
            raise PatchError("EINVAL", f"{owner}: text patch at {addr:#x} replaces "
                                       f"{len(expected)} bytes with {len(new)}")
        self._check_free(addr, len(new), owner)
        try:
            found = self.machine.read(addr, len(expected))
        except ConfigError:
            raise PatchError("EINVAL", f"{owner}: text {addr:#x}+{len(new)} "
                                       "is not mapped") from None
        if found != expected:
            raise PatchError("EINVAL", f"{owner}: text at {addr:#x} is not what the patch "
                                       f"expects: expected {_hex(expected)}, "
                                       f"found {_hex(found)}")

    # -- writing ------------------------------------------------------------
    def batch(self) -> Batch:
        """A :class:`Batch`: queue sites, apply them all in one protocol run on exit."""
        return Batch(self)

    def text_poke(self, addr: int, expected: bytes, new: bytes, owner: str) -> None:
        """Patch one live site with the arch's full cross-CPU protocol."""
        with self.batch() as b:
            b.queue(addr, expected, new, owner)

    def apply(self, sites: Sequence[tuple[int, bytes]]) -> None:
        """Run the protocol over verified sites (text_mutex held): out-of-line code
        first, then the sites, each in address order."""
        self.machine.text_mutex.assert_held("applying text patches")
        spans = sorted(sites)
        for (a, old), (b, _) in zip(spans, spans[1:]):
            if a + len(old) > b:
                raise PatchError("EINVAL", f"batched sites {a:#x}+{len(old)} and {b:#x} "
                                           "overlap")
        ordered = sorted(sites, key=lambda s: (not isinstance(s, OutOfLine), s))
        try:
            self.protocol(self.port, ordered)
        except EncodingError as err:
            raise PatchError("EINVAL", str(err)) from None
        finally:
            self.port.mark_written()

    def text_poke_sync(self) -> None:
        """One serializing round on every CPU (x86 text_poke_sync(), on_each_cpu sync_core)."""
        with self.machine.text_mutex:
            self.port.sync_all()

    def text_poke_early(self, addr: int, expected: bytes, new: bytes, owner: str) -> None:
        """Boot-time patch: store and flush, no cross-CPU sync.

        For text no other CPU has executed yet (boot, module load). From a
        CPU, that CPU serializes itself (x86 text_poke_early's sync_core());
        from the host nothing is synchronized at all.
        """
        with self.machine.text_mutex:
            self.verify(addr, expected, new, owner)
            self.port.write_text(addr, bytes(new))
            self.port.flush_icache(addr, addr + len(new))
            if self.cpu is not None:
                self.port.sync_cpu(self.cpu)
            self.port.mark_written()


def _check_owner(owner: str) -> None:
    if owner not in OWNERS:
        raise PatchError("EINVAL", f"unknown text owner {owner!r} (owners: {', '.join(OWNERS)})")

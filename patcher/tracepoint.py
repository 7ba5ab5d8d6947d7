"""Tracepoints: typed probes on static keys, arrays replaced copy-and-swap.

After kernel/tracepoint.c of 2.6.28: ``register_trace(name, probe)`` adds a
probe to the tracepoint's NULL-terminated ``funcs`` array by building a new
array, publishing it with one aligned pointer store, and freeing the old
one only after a grace period. The first probe activates the tracepoint's
enable mechanism (a static key, an immediate value or the state word), the
last one deactivates it.

An old array returns to the pool after a grace period
(:mod:`patcher.rcu`): ``__DO_TRACE`` never holds the array across a
context switch.
"""
from __future__ import annotations

from typing import Callable, Union

from patcher.enable import set_enabled
from patcher.errors import PatchError
from patcher.imv import ImmediateValues
from patcher.jump_label import StaticKeys
from patcher.rcu import GracePeriods
from patcher.tables import Tables, Tracepoint
from sim.dwarf import struct
from sim.event import STRING, Event, EventClass, make_event, s, u
from sim.guest import TASK_COMM_LEN, Guest
from sim.machine import Cpu

POOL_SIZE = 0x10000
HostProbe = Callable[[Event], None]
TracepointProbe = Union[int, HostProbe]


MAX_RT_PRIO = 100          # include/linux/sched.h; LTTng reports prio - MAX_RT_PRIO


def event_classes(word_bits: int) -> dict[str, EventClass]:
    """The event of each guest tracepoint, its fields named as LTTng names them.

    LTTng's instrumentation/events/lttng-module/kmem.h and sched.h: the
    kmem events carry the prototype's arguments, the sched events the
    comm, tid and prio of the tasks the prototype passes.
    """
    addr, size = u(word_bits, 16), u(word_bits)
    task = (("comm", STRING), ("tid", s(32)), ("prio", s(32)))
    alloc = (("call_site", addr), ("ptr", addr), ("bytes_req", size), ("bytes_alloc", size),
             ("gfp_flags", u(32, 16)))
    free = (("call_site", addr), ("ptr", addr))
    return {
        "kmalloc": EventClass("kmem_kmalloc", alloc),
        "kmem_cache_alloc": EventClass("kmem_cache_alloc", alloc),
        "kfree": EventClass("kmem_kfree", free),
        "kmem_cache_free": EventClass("kmem_cache_free", free),
        "sched_switch": EventClass("sched_switch", (
            *((f"prev_{n}", t) for n, t in task), ("prev_state", s(word_bits)),
            *((f"next_{n}", t) for n, t in task))),
        "sched_wakeup": EventClass("sched_wakeup", (*task, ("target_cpu", s(32)))),
    }


class ArrayPool:
    """Guest memory for probe arrays, freed after a grace period.

    ``region`` picks which ``POOL_SIZE`` window above the image this pool
    maps, so that tracepoints and markers each own one. ``retire`` queues
    an array swapped out; it returns to the pool once every CPU has been
    quiescent (context switch or halt) since the swap (:mod:`patcher.rcu`).
    """

    def __init__(self, guest: Guest, region: int = 0, slots: int = 16) -> None:
        top = max(seg.vaddr + seg.memsz for seg in guest.image.segments)
        self.base = ((top + 0xFFFFF) & ~0xFFFFF) + region * POOL_SIZE
        guest.machine.map(self.base, POOL_SIZE, "rw")
        self.slot = slots * guest.arch.word
        self.free = list(range(self.base, self.base + POOL_SIZE, self.slot))
        self.freed = 0
        self.rcu = GracePeriods(guest)

    def alloc(self) -> int:
        if not self.free:
            raise PatchError("ENOMEM", "probe-array pool exhausted")
        return self.free.pop(0)

    def retire(self, array: int) -> None:
        """Free ``array`` once every running CPU has been quiescent."""
        self.rcu.call_rcu(lambda: self._free(array))

    def _free(self, array: int) -> None:
        self.free.append(array)
        self.freed += 1

    @property
    def watching(self) -> bool:
        """Whether context switches are watched (a grace period is running)."""
        return self.rcu.watching

    def pending(self) -> int:
        """Old arrays still waiting for their grace period."""
        return self.rcu.pending()


class Tracepoints:
    """The tracepoints of one running guest."""

    def __init__(self, guest: Guest, tables: Tables, imv: ImmediateValues | None,
                 keys: StaticKeys | None) -> None:
        self.guest = guest
        self.machine = guest.machine
        self.word = guest.arch.word
        self.imv = imv
        self.keys = keys
        self.points = {tp.name: tp for tp in tables.tracepoints}
        self.by_address = {tp.address: tp for tp in tables.tracepoints}
        self.probes: dict[str, list[TracepointProbe]] = {}
        self.pool = ArrayPool(guest)
        self.classes = event_classes(guest.arch.bits)
        self.task = struct(guest.elf, "task_struct")
        self.thread_info = struct(guest.elf, "thread_info")
        guest.hypercalls.register("HC_TRACEPOINT", self._hc_tracepoint)

    # -- registration -----------------------------------------------------
    def tracepoint_probe_register(self, name: str, probe: TracepointProbe) -> int:
        """kernel/tracepoint.c (2.6.28): EEXIST for a probe already there; an
        unknown name keeps a pending entry and returns 0."""
        probes = self.probes.setdefault(name, [])
        if probe in probes:
            raise PatchError("EEXIST", f"tracepoint {name}: probe already registered")
        probes.append(probe)
        if name not in self.points:
            return 0
        tp = self.points[name]
        try:
            self._publish(tp)
        except PatchError:                  # ENOMEM: the entry as it was
            probes.remove(probe)
            raise
        if len(probes) == 1:
            self._activate(tp, True)
        return 0

    def tracepoint_probe_unregister(self, name: str, probe: TracepointProbe) -> int:
        """kernel/tracepoint.c (2.6.28): ENOENT for a name with no probe (no entry);
        a probe that is not there leaves the same probes (the array rebuilt
        unchanged), 0; the last one disarms."""
        probes = self.probes.get(name, [])
        if not probes:
            raise PatchError("ENOENT", f"tracepoint {name}: no probe registered")
        if probe not in probes:
            return 0
        if name not in self.points:
            probes.remove(probe)
            return 0
        tp = self.points[name]
        index = probes.index(probe)
        probes.remove(probe)
        if not probes:                      # disable_tracepoint: the state, then funcs
            self._activate(tp, False)
        try:
            self._publish(tp)
        except PatchError:                  # ENOMEM (never for the last): as it was
            probes.insert(index, probe)
            raise
        return 0

    register_trace = tracepoint_probe_register        # the 2.6.28 register_trace_<name>()
    unregister_trace = tracepoint_probe_unregister

    def _guest_funcs(self, tp: Tracepoint) -> list[int]:
        probes = self.probes.get(tp.name, [])
        funcs = [p for p in probes if isinstance(p, int)]
        if any(not isinstance(p, int) for p in probes):
            funcs.append(tp.hc_probe)          # one forwarder serves every host probe
        return funcs

    def _publish(self, tp: Tracepoint) -> None:
        """Copy-and-swap the probe array; retire the old one until a grace period passes."""
        funcs = self._guest_funcs(tp)
        funcs_field = tp.address + 2 * self.word      # { name, state, funcs, hc_probe }
        old = self.machine.read_word(funcs_field)
        new = 0
        if funcs:
            if len(funcs) + 1 > self.pool.slot // self.word:
                raise PatchError("ENOMEM", f"tracepoint {tp.name}: too many probes")
            new = self.pool.alloc()
            for i, func in enumerate(funcs + [0]):
                self.machine.write_word(new + i * self.word, func)
        self.machine.write_word(funcs_field, new)       # one aligned store: never torn
        if old:
            self.pool.retire(old)

    def _activate(self, tp: Tracepoint, on: bool) -> None:
        set_enabled(self.machine, tp.enable, tp.state_addr, 4, on, self.imv, self.keys)

    @property
    def freed(self) -> int:
        """Old arrays returned to the pool after their grace period."""
        return self.pool.freed

    def pending(self) -> int:
        """Old arrays still waiting for their grace period."""
        return self.pool.pending()

    # -- events -----------------------------------------------------------
    def _hc_tracepoint(self, cpu: Cpu, address: int, array: int, count: int) -> None:
        """HC_TRACEPOINT from a tracepoint's hc_probe: a1 = struct tracepoint *,
        a2 = unsigned long args[], a3 = count."""
        args = self.guest.machine.read_words(array, count, self.word)
        tp = self.by_address.get(address)
        if tp is None:
            raise self.machine.fault(cpu, f"HC_TRACEPOINT from unknown tracepoint {address:#x}")
        event = self._event(cpu, tp.name, args)
        for probe in list(self.probes.get(tp.name, [])):
            if not isinstance(probe, int):
                probe(event)

    def _signed(self, address: int, size: int) -> int:
        return int.from_bytes(self.machine.read(address, size), self.guest.arch.endian,
                              signed=True)

    def _task(self, address: int) -> tuple[str, int, int]:
        """(comm, tid, prio - MAX_RT_PRIO) of the task_struct at ``address``."""
        read, off = self.machine.read, self.task.offset
        comm = read(address + off("comm"), TASK_COMM_LEN).split(b"\0")[0].decode("utf-8",
                                                                                 "replace")
        pid = self.machine.read_word(address + off("pid"), 4)
        prio = self._signed(address + off("prio"), 4)
        return comm, pid, prio - MAX_RT_PRIO

    def _event(self, cpu: Cpu, name: str, args: list[int]) -> Event:
        cls = self.classes[name]
        if name == "sched_switch":
            prev, nxt = args
            state = self._signed(prev + self.task.offset("state"), self.word)
            values: list[int | str] = [*self._task(prev), state, *self._task(nxt)]
        elif name == "sched_wakeup":
            (p,) = args
            stack = self.machine.read_word(p + self.task.offset("stack"))
            values = [*self._task(p), self.machine.read_word(
                stack + self.thread_info.offset("cpu"), 4)]
        else:
            values = list(args)
        task = self.guest.current_task(cpu)
        return make_event(cls, cpu=cpu.index, timestamp=cpu.clock_ns, tid=task.pid,
                          comm=task.comm, values=values)

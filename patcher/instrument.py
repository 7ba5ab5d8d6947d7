"""Wire every mechanism onto one guest: the patcher's front door.

:func:`attach` also serves the patcher-level part of the guest module API
(HC_MODULE, ``kernel/include/kisim/module.h``; :class:`ModuleApi`), so that
a module's calls and the host's act on one set of mechanisms.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from patcher.errors import PatchError
from patcher.imv import ImmediateValues
from patcher.jump_label import StaticKeys
from patcher.markers import Markers
from patcher.tables import Tables, load_tables
from patcher.text import TextPatcher
from patcher.tracepoint import Tracepoints
from sim.guest import ERRNO, Guest, ModuleCall, register_module_service
from sim.machine import Cpu

#: The HC_MODULE services :class:`ModuleApi` serves.
SERVICES = ("STATIC", "MARKER", "TRACEPOINT")


@dataclass
class Instrumentation:
    guest: Guest
    tables: Tables
    text: TextPatcher
    imv: ImmediateValues | None
    keys: StaticKeys | None
    markers: Markers
    tracepoints: Tracepoints


def attach(guest: Guest, cpu: int | None = None) -> Instrumentation:
    """Read the guest's tables and set up imv, static keys, markers and tracepoints.

    Patches are initiated from the host, or from ``cpu`` (which then pays
    for the flushes). The guest's modules reach the same mechanisms
    (:class:`ModuleApi`).
    """
    tables = load_tables(guest.image, guest.arch)
    text = TextPatcher(guest.machine, cpu)
    imv = ImmediateValues(text, tables.imv) if tables.imv else None
    keys = StaticKeys(text, tables.jump_entries) if tables.jump_entries else None
    inst = Instrumentation(guest, tables, text, imv, keys,
                           Markers(guest, tables, imv, keys),
                           Tracepoints(guest, tables, imv, keys))
    ModuleApi(inst).serve()
    return inst


class ModuleApi:
    """The patcher-level module API of one guest, on its :class:`Instrumentation`.

    - ``MOD_STATIC_KEY_UPDATE``: ``jump_label_update(key)`` of
      kernel/jump_label.c (v5.10). The guest keeps the key's count and its
      rules; here every ``__jump_table`` site of the key becomes what
      ``jump_label_type()`` gives, the jump when ``enabled ^ branch`` (bit 0
      of the entry's key field, v5.10's ``jump_entry_is_branch()``), as
      :func:`patcher.jump_label.jump_label_update` applies them.
    - ``MOD_MARKER_*``: marker_probe_register / _unregister (kernel/marker.c)
      and marker_arm / _disarm, with a guest probe function; a2 points at
      ``{ name, format, probe, probe_private }``.
    - ``MOD_TRACEPOINT_*``: tracepoint_probe_register / _unregister
      (kernel/tracepoint.c; register_trace_<name>), a2 = name, a3 = probe.

    Text is patched from the calling CPU. 0, or the kernel's -errno; the
    reason of each refusal is kept in :attr:`refusals`.
    """

    def __init__(self, inst: Instrumentation) -> None:
        self.inst = inst
        self.machine = inst.guest.machine
        self.refusals: list[str] = []

    def serve(self) -> None:
        for service in SERVICES:
            self.inst.guest.services[service] = self.call

    def call(self, cpu: Cpu, op: str, a2: int, a3: int) -> int:
        handler = {"MOD_STATIC_KEY_UPDATE": self._jump_label_update,
                   "MOD_MARKER_REGISTER": self._marker_register,
                   "MOD_MARKER_UNREGISTER": self._marker_unregister,
                   "MOD_MARKER_ARM": lambda a, _: self.inst.markers.marker_arm(self._name(a)),
                   "MOD_MARKER_DISARM": lambda a, _: self.inst.markers.marker_disarm(
                       self._name(a)),
                   "MOD_TRACEPOINT_REGISTER": lambda a, b: self.inst.tracepoints
                   .tracepoint_probe_register(self._name(a), b),
                   "MOD_TRACEPOINT_UNREGISTER": lambda a, b: self.inst.tracepoints
                   .tracepoint_probe_unregister(self._name(a), b)}.get(op)
        if handler is None:
            raise self.machine.fault(cpu, f"{op}: not a patcher module operation")
        try:
            with self.inst.text.on_cpu(cpu.index):
                handler(a2, a3)
        except PatchError as err:
            self.refusals.append(f"{op.removeprefix('MOD_').lower()}: {err.message}")
            return -ERRNO[err.errno]
        return 0

    def _name(self, addr: int) -> str:
        return self.inst.guest.read_string(addr, 256)

    def _jump_label_update(self, key: int, _a3: int) -> None:
        """Rewrite the sites of ``key`` whose text differs from jump_label_type().
        A count of -1 (the first enable, patching) counts as enabled."""
        if self.inst.keys is not None:
            self.inst.keys.jump_label_update(key, self.machine.read_word(key, 4) != 0,
                                             only_changed=True)

    def _marker_args(self, block: int) -> tuple[str, int, int, int]:
        word = self.machine.arch.word
        name, fmt, probe, private = (self.machine.read_word(block + i * word) for i in range(4))
        return self._name(name), fmt, probe, private

    def _marker_register(self, block: int, _a3: int) -> None:
        name, fmt, probe, private = self._marker_args(block)
        self.inst.markers.marker_probe_register(name, self._name(fmt) if fmt else None, probe,
                                                private)

    def _marker_unregister(self, block: int, _a3: int) -> None:
        name, _, probe, private = self._marker_args(block)
        self.inst.markers.marker_probe_unregister(name, probe, private)


def _service(service: str) -> Callable[[Guest], ModuleCall]:
    def factory(guest: Guest) -> ModuleCall:
        attach(guest)                   # serves every one of SERVICES
        return guest.services[service]
    return factory


for _name in SERVICES:
    register_module_service(_name, _service(_name))

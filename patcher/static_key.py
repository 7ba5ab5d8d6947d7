"""The host half of the guest's static keys (kernel/jump_label.c, v5.10).

The guest keeps each ``struct static_key`` count and its rules
(``static_key_slow_inc`` and the rest, as guest code). When a count
changes state, the guest asks for ``jump_label_update(key)``
(HC_MODULE, ``MOD_STATIC_KEY_UPDATE``): every ``__jump_table`` site of
the key becomes what ``jump_label_type()`` says, the jump when
``enabled ^ branch`` (bit 0 of the entry's key field, as v5.10's
``jump_entry_is_branch()``) and the nop otherwise, in one batch of the
arch's text protocol, started from the calling CPU.
"""
from __future__ import annotations

from collections import defaultdict

from patcher.jump_label import OWNER, arch_jump_label_transform
from patcher.tables import JumpEntry, load_tables
from patcher.text import MachinePort, TextPatcher
from sim.guest import Guest, ModuleCall, register_module_service
from sim.machine import Cpu


class GuestStaticKeys:
    """One guest's static-key sites, by key (branch bit cleared)."""

    def __init__(self, guest: Guest) -> None:
        self.guest = guest
        self.machine = guest.machine
        self.text = TextPatcher(self.machine)
        self.sites: dict[int, list[JumpEntry]] = defaultdict(list)
        for entry in load_tables(guest.image, guest.arch).jump_entries:
            self.sites[entry.key & ~1].append(entry)
        self.updates = 0                    # jump_label_update calls that patched

    def enabled(self, key: int) -> bool:
        """static_key_enabled(): a count of -1 (the first enable patching) counts."""
        return self.machine.read_word(key, 4) != 0

    def jump_label_update(self, cpu: Cpu, key: int) -> int:
        """Rewrite the sites of ``key`` whose text differs from jump_label_type()."""
        enabled = self.enabled(key)
        self.text.cpu, self.text.port = cpu.index, MachinePort(self.machine, cpu.index)
        try:
            with self.text.batch() as batch:
                for entry in self.sites.get(key, ()):
                    jump = enabled ^ bool(entry.key & 1)
                    expected, new = arch_jump_label_transform(self.machine.arch, entry, jump)
                    if self.machine.read(entry.code, len(new)) != new:
                        batch.queue(entry.code, expected, new, OWNER)
                changed = len(batch)
        finally:
            self.text.cpu, self.text.port = None, MachinePort(self.machine)
        self.updates += bool(changed)
        return 0

    def module_call(self, cpu: Cpu, op: str, key: int, _a3: int) -> int:
        if op != "MOD_STATIC_KEY_UPDATE":
            raise self.machine.fault(cpu, f"{op}: not a static key operation")
        return self.jump_label_update(cpu, key)


def _service(guest: Guest) -> ModuleCall:
    return GuestStaticKeys(guest).module_call


register_module_service("STATIC", _service)

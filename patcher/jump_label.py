"""Static keys: each ``__jump_table`` site flips between nop and jump.

After kernel/jump_label.c: a key's enable count is reference counted
(``static_key_slow_inc`` / ``static_key_slow_dec``); the 0 -> 1 and 1 -> 0
transitions rewrite every site of the key in one batch through the text
protocol, as ``arch_jump_label_transform_queue()`` / ``_apply()`` do.
"""
from __future__ import annotations

from collections import Counter, defaultdict

from arches import Arch
from patcher.errors import PatchError
from patcher.tables import JumpEntry
from patcher.text import TextPatcher

OWNER = "jump_label"


def arch_jump_label_transform(arch: Arch, entry: JumpEntry, enable: bool) -> tuple[bytes, bytes]:
    """``(expected, new)`` bytes at ``entry.code``: the built nop <-> ``jmp target``.

    The nop is the one the image was built with (x86 5-byte P6 nop, ARM
    ``mov r0, r0``, PowerPC ``ori 0,0,0``); the jump is the arch's encoder.
    """
    jump = arch.encode_jump(entry.code, entry.target)
    if len(jump) != len(entry.insn):
        raise PatchError("EINVAL", f"jump label at {entry.code:#x}: {len(entry.insn)}-byte "
                                   f"site cannot hold a {len(jump)}-byte jump")
    return (entry.insn, jump) if enable else (jump, entry.insn)


class StaticKeys:
    """Every static key of one image, keyed by the key's address."""

    def __init__(self, patcher: TextPatcher, entries: list[JumpEntry]) -> None:
        self.patcher = patcher
        self.sites: dict[int, list[JumpEntry]] = defaultdict(list)
        self.count: Counter[int] = Counter()
        for entry in entries:
            patcher.reserve(entry.code, len(entry.insn), OWNER)
            self.sites[entry.key].append(entry)

    def enabled(self, key: int) -> bool:
        return self.count[key] > 0

    def static_key_slow_inc(self, key: int) -> None:
        self._known(key)
        self.count[key] += 1
        if self.count[key] == 1:
            self.jump_label_update(key, True)

    def static_key_slow_dec(self, key: int) -> None:
        self._known(key)
        if self.count[key] == 0:
            raise PatchError("EINVAL", f"static key {key:#x} decremented below zero")
        self.count[key] -= 1
        if self.count[key] == 0:
            self.jump_label_update(key, False)

    def static_key_enable(self, key: int) -> None:
        """Set the key's count to 1 whatever it was (kernel/jump_label.c, 4.13+)."""
        self._known(key)
        if self.count[key] > 0:
            return
        self.count[key] = 1
        self.jump_label_update(key, True)

    def static_key_disable(self, key: int) -> None:
        """Set the key's count to 0 whatever it was (kernel/jump_label.c, 4.13+)."""
        self._known(key)
        if self.count[key] == 0:
            return
        self.count[key] = 0
        self.jump_label_update(key, False)

    def _known(self, key: int) -> None:
        if key not in self.sites:
            raise PatchError("ENOENT", f"no __jump_table site tests key {key:#x}")

    def jump_label_update(self, key: int, enable: bool) -> None:
        """Rewrite every site of ``key`` in one batch (the key's new state: ``enable``)."""
        arch = self.patcher.arch
        with self.patcher.batch() as batch:
            for entry in self.sites[key]:
                expected, new = arch_jump_label_transform(arch, entry, enable)
                batch.queue(entry.code, expected, new, OWNER)

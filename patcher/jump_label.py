"""Static keys: each ``__jump_table`` site flips between nop and jump.

After kernel/jump_label.c: a key's enable count is reference counted
(``static_key_slow_inc`` / ``static_key_slow_dec``); the 0 -> 1 and 1 -> 0
transitions rewrite every site of the key in one batch through the text
protocol, as ``arch_jump_label_transform_queue()`` / ``_apply()`` do.
``static_key_enable`` / ``static_key_disable`` follow v5.10: they act only
on a key whose count is 0 / 1; enable WARN_ON_ONCE on a count above 1,
disable on any count but 0 and 1.
"""
from __future__ import annotations

import logging
from collections import Counter, defaultdict
from typing import Iterable

from arches import Arch
from patcher.errors import PatchError
from patcher.tables import JumpEntry
from patcher.text import TextPatcher

OWNER = "jump_label"
log = logging.getLogger(__name__)


def arch_jump_label_transform(arch: Arch, entry: JumpEntry, jump: bool) -> tuple[bytes, bytes]:
    """``(expected, new)`` bytes at ``entry.code`` for the site's new type (v5.10's
    ``type``: ``jump``, JUMP_LABEL_JMP, or the nop): the kernel nop <-> ``jmp target``.

    The nop is the arch's (x86 5-byte P6 nop, ARM ``mov r0, r0`` or Thumb-2
    ``nop.w``, PowerPC ``ori 0,0,0``); the jump is the arch's encoder.
    """
    branch = arch.encode_jump(entry.code, entry.target)
    if len(branch) != len(entry.insn):
        raise PatchError("EINVAL", f"jump label at {entry.code:#x}: {len(entry.insn)}-byte "
                                   f"site cannot hold a {len(branch)}-byte jump")
    return (entry.insn, branch) if jump else (branch, entry.insn)


def jump_label_update(patcher: TextPatcher,
                      changes: Iterable[tuple[JumpEntry, bytes, bytes]]) -> None:
    """__jump_label_update (kernel/jump_label.c, v5.10) for ``(entry, expected, new)``.

    With HAVE_JUMP_LABEL_BATCH the sites are queued and applied in runs of
    the arch's protocol of :attr:`Arch.jump_label_batch` sites each
    (arch_jump_label_transform_queue, _apply: x86 applies a full queue and
    begins another); without it each site is arch_jump_label_transform, a
    run of its own (ARM a stop_machine each).
    """
    changes = list(changes)
    size = patcher.arch.jump_label_batch or 1
    runs = [changes[i:i + size] for i in range(0, len(changes), size)]
    for run in runs:
        with patcher.batch() as batch:
            for entry, expected, new in run:
                batch.queue(entry.code, expected, new, OWNER)


class StaticKeys:
    """Every static key of one image, keyed by the key's address."""

    def __init__(self, patcher: TextPatcher, entries: list[JumpEntry]) -> None:
        self.patcher = patcher
        self.sites: dict[int, list[JumpEntry]] = defaultdict(list)
        self.count: Counter[int] = Counter()
        #: WARN_ON_ONCE site (the function's name) -> times its condition held.
        self.warnings: Counter[str] = Counter()
        for entry in entries:
            patcher.reserve(entry.code, len(entry.insn), OWNER)
            self.sites[entry.key & ~1].append(entry)    # bit 0: the site's branch

    def enabled(self, key: int) -> bool:
        """static_key_enabled(): static_key_count() > 0, a negative count reading as 1."""
        return self.count[key] != 0

    def static_key_slow_inc(self, key: int) -> None:
        """kernel/jump_label.c (v5.10) static_key_slow_inc: the 0 -> 1 step patches the sites."""
        self._known(key)
        self.count[key] += 1
        if self.count[key] == 1:
            self.jump_label_update(key, True)

    def static_key_slow_dec(self, key: int) -> None:
        """kernel/jump_label.c (v5.10) static_key_slow_dec: the 1 -> 0 step patches them
        back. Any other count is decremented by static_key_slow_try_dec, which WARNs
        (every time) when the count it found was already negative: 0 -> -1 is silent."""
        self._known(key)
        found = self.count[key]
        self.count[key] = found - 1
        if found == 1:
            self.jump_label_update(key, False)
        elif found < 0:
            self._warn("static_key_slow_dec", key, "jump label: negative count!")

    def static_key_enable(self, key: int) -> None:
        """kernel/jump_label.c (v5.10) static_key_enable_cpuslocked: a key
        already on is left alone, with WARN_ON_ONCE unless its count is 1;
        a key at 0 goes to 1 and its sites are patched."""
        self._known(key)
        if self.count[key] > 0:
            self._warn_on_once("static_key_enable", self.count[key] != 1, key)
            return
        if self.count[key] == 0:            # a negative count is left as it is
            self.count[key] = 1
            self.jump_label_update(key, True)

    def static_key_disable(self, key: int) -> None:
        """kernel/jump_label.c (v5.10) static_key_disable_cpuslocked: only a
        count of exactly 1 goes to 0 (and is patched); any other count is
        left as it is, with WARN_ON_ONCE unless it is 0."""
        self._known(key)
        if self.count[key] != 1:
            self._warn_on_once("static_key_disable", self.count[key] != 0, key)
            return
        self.count[key] = 0
        self.jump_label_update(key, False)

    def _warn_on_once(self, where: str, condition: bool, key: int) -> None:
        """WARN_ON_ONCE (include/asm-generic/bug.h): every hit is counted in
        :attr:`warnings`; the first one at ``where`` is logged."""
        if condition:
            self._warn(where, key, once=True)

    def _warn(self, where: str, key: int, message: str = "", once: bool = False) -> None:
        """WARN at ``where``: counted in :attr:`warnings`, and logged (only the
        first time, ``once``)."""
        self.warnings[where] += 1
        if not once or self.warnings[where] == 1:
            log.warning("WARNING: %s: static key %#x has count %d%s", where, key,
                        self.count[key], f": {message}" if message else "")

    def _known(self, key: int) -> None:
        if key not in self.sites:
            raise PatchError("ENOENT", f"no __jump_table site tests key {key:#x}")

    def jump_label_update(self, key: int, enable: bool, only_changed: bool = False) -> None:
        """Rewrite every site of ``key`` (the key's new state: ``enable``) to what
        jump_label_type() gives it; ``only_changed``: leave a site that holds that
        already (a module's keys at jump_label_init, and the guest's own count)."""
        arch, machine = self.patcher.arch, self.patcher.machine
        changes = ((entry, *arch_jump_label_transform(arch, entry, enable ^ bool(entry.key & 1)))
                   for entry in self.sites.get(key, ()))
        jump_label_update(self.patcher, (
            (entry, old, new) for entry, old, new in changes
            if not only_changed or machine.read(entry.code, len(new)) != new))

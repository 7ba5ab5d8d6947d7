"""sim.uchook: code and memory hooks called as ``Uc.hook_add``'s, with one frame fewer."""
from __future__ import annotations

import pytest
import unicorn
from unicorn.x86_const import UC_X86_REG_RAX

from sim.uchook import hook_add

BASE = 0x10000
# mov rax, 0x20000; mov qword [rax], rax; mov qword [rax+8], rax; nop
CODE = bytes.fromhex("48c7c000000200" "488900" "48894008" "90")


def _uc() -> unicorn.Uc:
    uc = unicorn.Uc(unicorn.UC_ARCH_X86, unicorn.UC_MODE_64)
    uc.mem_map(BASE, 0x20000)
    uc.mem_write(BASE, CODE)
    return uc


def _calls(add) -> list[tuple]:
    """What a code hook and a memory-write hook see over CODE, installed by ``add``."""
    uc, seen = _uc(), []
    add(uc, unicorn.UC_HOOK_CODE, lambda u, a, s, d: seen.append((u is uc, a, s, d)), "code")
    add(uc, unicorn.UC_HOOK_MEM_WRITE,
        lambda u, k, a, s, v, d: seen.append((u is uc, k, a, s, v, d)), "mem", 0x20000, 0x20007)
    uc.emu_start(BASE, BASE + len(CODE))
    return seen


def test_hooks_see_what_the_bindings_hooks_see() -> None:
    ours = _calls(hook_add)
    assert ours == _calls(lambda uc, kind, *rest: uc.hook_add(kind, *rest))
    assert len(ours) == 5 and ours[2] == (True, unicorn.UC_MEM_WRITE, 0x20000, 8, 0x20000, "mem")


def test_an_exception_stops_the_emulation_and_is_raised_by_emu_start() -> None:
    uc, ran = _uc(), []

    def hook(_uc, address, _size, _data) -> None:
        ran.append(address)
        raise KeyError("from the hook")

    hook_add(uc, unicorn.UC_HOOK_CODE, hook)
    with pytest.raises(KeyError, match="from the hook"):
        uc.emu_start(BASE, BASE + len(CODE))
    assert ran == [BASE] and uc.reg_read(UC_X86_REG_RAX) == 0   # stopped before it ran


def test_hook_del_removes_it_and_other_kinds_are_refused() -> None:
    uc, ran = _uc(), []
    handle = hook_add(uc, unicorn.UC_HOOK_CODE, lambda *a: ran.append(a))
    uc.hook_del(handle)
    uc.emu_start(BASE, BASE + len(CODE))
    assert ran == [] and uc.reg_read(UC_X86_REG_RAX) == 0x20000
    with pytest.raises(ValueError, match="only code and memory-access hooks"):
        hook_add(uc, unicorn.UC_HOOK_INTR, lambda *a: None)

"""Keystone and Capstone, set up from an arch's declared modes."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import capstone
import keystone

from arches import Arch
from sim.errors import AsmError


@dataclass(frozen=True)
class Insn:
    address: int
    bytes: bytes
    mnemonic: str
    op_str: str

    @property
    def text(self) -> str:
        return f"{self.mnemonic} {self.op_str}".strip()


@functools.lru_cache(maxsize=None)
def _ks(arch: Arch) -> keystone.Ks:
    return keystone.Ks(*arch.ks_mode)


@functools.lru_cache(maxsize=None)
def _cs(arch: Arch) -> capstone.Cs:
    cs = capstone.Cs(*arch.cs_mode)
    cs.detail = False
    return cs


def assemble(arch: Arch, text: str, address: int = 0) -> bytes:
    """Assemble ``text`` at ``address``; :class:`AsmError` if it does not."""
    try:
        encoding, _ = _ks(arch).asm(text, address)
    except keystone.KsError as err:
        raise AsmError(f"{arch.name}: cannot assemble {text.strip()!r}: {err}") from None
    if not encoding:
        raise AsmError(f"{arch.name}: {text.strip()!r} assembles to nothing")
    return bytes(encoding)


def disassemble(arch: Arch, code: bytes, address: int = 0,
                count: int = 0) -> list[Insn]:
    """Decode ``code``; stops at the first byte sequence Capstone rejects."""
    return [Insn(i.address, bytes(i.bytes), i.mnemonic, i.op_str)
            for i in _cs(arch).disasm(code, address, count)]


def disasm_one(arch: Arch, code: bytes, address: int = 0) -> str:
    """Text of the first instruction in ``code``, or a hex dump if invalid."""
    insns = disassemble(arch, code, address, count=1)
    if insns:
        return f"{insns[0].text}  ({insns[0].bytes.hex(' ')})"
    return f"(undecodable: {code[:arch.max_insn_len].hex(' ')})"

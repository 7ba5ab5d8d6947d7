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


def _non_ascii(text: str) -> str | None:
    """``line N: non-ASCII character 'c'`` for the first one in ``text``, else None."""
    for number, line in enumerate(text.splitlines() or [text], 1):
        for ch in line:
            if not ch.isascii():
                return f"line {number}: non-ASCII character {ch!r} (Keystone reads ASCII only)"
    return None


def _ks_asm(arch: Arch, text: str, address: int) -> bytes:
    encoding, _ = _ks(arch).asm(text, address)
    return bytes(encoding or b"")


def _failing_line(arch: Arch, lines: list[str], address: int) -> int | None:
    """1-based number of the first line whose prefix fails for a reason other than a
    symbol defined further down, or None."""
    for n in range(1, len(lines) + 1):
        try:
            _ks_asm(arch, "\n".join(lines[:n]), address)
        except keystone.KsError as err:
            if err.errno != keystone.KS_ERR_ASM_SYMBOL_MISSING:
                return n
    return None


def assemble(arch: Arch, text: str, address: int = 0, source: str | None = None) -> bytes:
    """Assemble ``text`` at ``address``; :class:`AsmError` if it does not.

    With several lines, the error names the failing line (``SOURCE:LINE``,
    ``SOURCE`` defaulting to ``line``) as an assembler does.
    """
    where = f"{source}: " if source else ""
    bad = _non_ascii(text)
    if bad:
        raise AsmError(f"{arch.name}: {where}{bad}")
    try:
        code = _ks_asm(arch, text, address)
    except keystone.KsError as err:
        lines = text.splitlines()
        n = _failing_line(arch, lines, address) if len(lines) > 1 else None
        if n is not None:
            raise AsmError(f"{source or 'line'}:{n}: {arch.name}: cannot assemble "
                           f"{lines[n - 1].strip()!r}: {err}") from None
        raise AsmError(f"{arch.name}: {where}cannot assemble {text.strip()!r}: {err}") from None
    if not code:
        raise AsmError(f"{arch.name}: {where}{text.strip()!r} assembles to nothing")
    return code


def disassemble(arch: Arch, code: bytes, address: int = 0,
                count: int = 0) -> list[Insn]:
    """Decode ``code``; stops at the first byte sequence Capstone rejects."""
    return [Insn(i.address, bytes(i.bytes), i.mnemonic, i.op_str)
            for i in _cs(arch).disasm(code, address, count)]


def listing(arch: Arch, code: bytes, address: int = 0) -> list[Insn]:
    """Decode all of ``code``: bytes Capstone rejects become ``.byte`` entries,
    one instruction-alignment unit at a time, and decoding goes on after them."""
    out: list[Insn] = []
    offset = 0
    while offset < len(code):
        decoded = disassemble(arch, code[offset:], address + offset)
        out.extend(decoded)
        offset += sum(len(i.bytes) for i in decoded)
        if offset < len(code):
            raw = code[offset:offset + arch.insn_align]
            out.append(Insn(address + offset, raw, ".byte",
                            ", ".join(f"{b:#04x}" for b in raw)))
            offset += len(raw)
    return out


def disasm_one(arch: Arch, code: bytes, address: int = 0) -> str:
    """Text of the first instruction in ``code``, or a hex dump if invalid."""
    insns = disassemble(arch, code, address, count=1)
    if insns:
        return f"{insns[0].text}  ({insns[0].bytes.hex(' ')})"
    return f"(undecodable: {code[:arch.max_insn_len].hex(' ')})"

"""Keystone and Capstone, set up from an arch's declared modes.

:func:`assemble` bounds its input before Keystone sees it: at most
:data:`MAX_SOURCE` characters, and at most :data:`MAX_CODE` bytes of output
as estimated from the text (``.fill``/``.space``/``.skip``/``.zero``/
``.org``/``.align`` sizes and ``.rept``/``.irp`` counts, evaluated as GNU as
evaluates absolute expressions; every other statement counted at its
largest possible size). Keystone expands such directives byte by byte:
``.fill 33554432,1,0x90`` took 7 s in Keystone alone and far more to list
and run.
"""
from __future__ import annotations

import ast
import functools
import operator
import os
import pickle
import re
import select
import signal
import tempfile
from dataclasses import dataclass
from typing import Callable

import capstone
import keystone

from arches import Arch
from sim.errors import AsmError


MAX_SOURCE = 1 << 20        # characters of assembly text
MAX_CODE = 1 << 16          # bytes of machine code one assembly may produce


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


def _cs(arch: Arch, isa: int | None = None) -> capstone.Cs:
    """Capstone for ``arch``'s kernel code, or for code the CPU runs in the
    instruction-set state ``isa`` (:attr:`Arch.isa_cs_modes`: ARM or Thumb)."""
    return _cs_mode(arch.isa_cs_modes.get(isa, arch.cs_mode) if isa is not None
                    else arch.cs_mode)


@functools.lru_cache(maxsize=None)
def _cs_mode(mode: tuple[int, int]) -> capstone.Cs:
    cs = capstone.Cs(*mode)
    cs.detail = False
    return cs


def _unreadable(text: str) -> str | None:
    """``line N: ...`` for the first character of ``text`` Keystone cannot take:
    one beyond ASCII, or a NUL (it reads a C string, and would end the text
    there without a word), else None."""
    for number, line in enumerate(text.splitlines() or [text], 1):
        for ch in line:
            if not ch.isascii():
                return f"line {number}: non-ASCII character {ch!r} (Keystone reads ASCII only)"
            if ch == "\0":
                return (f"line {number}: a NUL character (Keystone reads the text as a C "
                        "string, which would end there)")
    return None


def _ks_asm(arch: Arch, text: str, address: int) -> bytes:
    encoding, _ = _ks(arch).asm(text, address)
    return bytes(encoding or b"")


def _ks_asm_within(arch: Arch, text: str, address: int, seconds: float) -> bytes:
    """:func:`_ks_asm` in a forked child killed after ``seconds``: Keystone's
    parser never returns on some malformed directives (``.endif ~0``,
    ``.nop ~0``, ``.endr -1``), and a call into C cannot be interrupted. What
    it writes to stderr is a warning that it changed the text's meaning
    (``.fill`` of a size over 8 truncated to 8): an :class:`AsmError`, in one
    line, instead of a few raw lines and a result that is not the text's."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:                                   # the child: assemble, report, exit
        try:
            os.close(read_end)
            with tempfile.TemporaryFile() as said:  # what Keystone writes to stderr
                os.dup2(said.fileno(), 2)
                try:
                    result: tuple[str, object] = ("code", _ks_asm(arch, text, address))
                except keystone.KsError as err:
                    result = ("error", err.errno)
                said.seek(0)
                warning = said.read(4096).decode("ascii", "replace").strip()
            if warning and result[0] == "code":
                result = ("warning", warning.splitlines()[0])
            with os.fdopen(write_end, "wb") as out:
                out.write(pickle.dumps(result))
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        if not select.select([pipe], [], [], seconds)[0]:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AsmError(f"{arch.name}: Keystone did not finish within {seconds:g} s "
                           f"(it hangs on some malformed directives): {text.strip()[:60]!r}")
        data = pipe.read()
    os.waitpid(pid, 0)
    kind, value = pickle.loads(data)
    if kind == "error":
        raise keystone.KsError(value)
    if kind == "warning":       # it assembled something else than the text says
        raise AsmError(f"{arch.name}: Keystone: {value} (in {text.strip()[:60]!r})")
    return value                                   # type: ignore[return-value]


def _failing_line(arch: Arch, lines: list[str], address: int,
                  asm: Callable[[Arch, str, int], bytes] = _ks_asm) -> int | None:
    """1-based number of the first line whose prefix fails for a reason other than a
    symbol defined further down, or None. Bisected (log n assemblies, not n): a
    prefix that fails so goes on failing as lines are added."""
    def fails(n: int) -> bool:
        try:
            asm(arch, "\n".join(lines[:n]), address)
        except keystone.KsError as err:
            return err.errno != keystone.KS_ERR_ASM_SYMBOL_MISSING
        return False
    if not fails(len(lines)):
        return None
    lo, hi = 1, len(lines)
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fails(mid) else (mid + 1, hi)
    return lo


def assemble(arch: Arch, text: str, address: int = 0, source: str | None = None,
             timeout: float | None = None) -> bytes:
    """Assemble ``text`` at ``address``; :class:`AsmError` if it does not.

    With ``timeout`` (for text from a user), Keystone runs in a forked
    child that is killed after that many seconds.

    With several lines, the error names the failing line (``SOURCE:LINE``,
    ``SOURCE`` defaulting to ``line``) as an assembler does.
    """
    where = f"{source}: " if source else ""
    bad = _unreadable(text)
    if bad:
        raise AsmError(f"{arch.name}: {where}{bad}")
    _bound(arch, text, address, where)
    asm = _ks_asm if timeout is None else functools.partial(_ks_asm_within, seconds=timeout)
    try:
        code = asm(arch, text, address)
    except keystone.KsError as err:
        lines = text.splitlines()
        n = _failing_line(arch, lines, address, asm) if len(lines) > 1 else None
        if n is not None:
            raise AsmError(f"{source or 'line'}:{n}: {arch.name}: cannot assemble "
                           f"{lines[n - 1].strip()!r}: {err}") from None
        raise AsmError(f"{arch.name}: {where}cannot assemble {text.strip()!r}: {err}") from None
    if not code:
        raise AsmError(f"{arch.name}: {where}{text.strip()!r} assembles to nothing")
    return code


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.LShift: operator.lshift,
           ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitAnd: operator.and_,
           ast.BitXor: operator.xor}
_UNOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
_OCTAL = re.compile(r"(?<![\w.])0([0-7]+)\b")
_CHAR = re.compile(r"'(.)")
_DIRECTIVE = re.compile(r"^\s*(?:[\w.$]+:\s*)*(\.\w+)\b\s*(.*)$", re.S)
_ASSIGN = re.compile(r"^\s*(?:\.(?:equ|set|equiv)\s+([\w.$]+)\s*,|([\w.$]+)\s*=)\s*(.+)$")
_COMMENT = re.compile(r"#|@|//|/\*")
_REFUSED = {".incbin": "reads a file", ".macro": "is not supported (expand it by hand)"}


def _value(expr: str, names: dict[str, int], what: str) -> int:
    """An absolute GNU as expression (numbers, known .equ names, C operators)."""
    text = _CHAR.sub(lambda m: str(ord(m[1])), _OCTAL.sub(r"0o\1", expr.strip()))
    text = text.replace("/", "//")

    def walk(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.LShift) and right > 4096:
                raise ValueError("too large")
            return _BINOPS[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNOPS:
            return _UNOPS[type(node.op)](walk(node.operand))
        raise ValueError("not absolute")
    try:
        return walk(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        raise AsmError(f"{what}: {expr.strip()!r} is not a number kisim can bound; the "
                       f"size limit is {MAX_CODE} bytes (give a constant)") from None


def _count(value: int, what: str) -> int:
    """A repeat count: Keystone loops that many times even when each pass
    emits nothing (``.rept`` of an empty body, ``.fill N, 0``), so the count
    itself is bounded by :data:`MAX_CODE`."""
    if value > MAX_CODE:
        raise AsmError(f"{what}: count {value} is over the limit of {MAX_CODE}")
    return max(0, value)


def _statements(text: str) -> list[str]:
    return [part for line in text.splitlines() for part in line.split(";") if part.strip()]


def _bound(arch: Arch, text: str, address: int, where: str) -> None:
    """Refuse ``text`` before Keystone expands it if it may exceed the limits."""
    if len(text) > MAX_SOURCE:
        raise AsmError(f"{arch.name}: {where}{len(text)} characters of assembly, over the "
                       f"{MAX_SOURCE}-character limit")
    names: dict[str, int] = {}
    repeat = [1]                   # product of the enclosing .rept/.irp counts
    total = 0
    for stmt in _statements(text):
        assigned = _ASSIGN.match(stmt)
        if assigned:
            name = assigned[1] or assigned[2]
            try:
                names[name] = _value(assigned[3], names, "")
            except AsmError:
                names.pop(name, None)
            continue
        found = _DIRECTIVE.match(stmt)
        name, args = (found[1].lower(), found[2]) if found else ("", stmt)
        what = f"{arch.name}: {where}{name}"
        if name in _REFUSED:
            raise AsmError(f"{what} {_REFUSED[name]}")
        parts = _COMMENT.split(args)[0].split(",") if name else [stmt]
        size = max(arch.max_insn_len, 8 * len(parts), len(stmt))   # any other statement
        if name == ".rept":
            repeat.append(repeat[-1] * _count(_value(parts[0], names, what), what))
            size = 0
        elif name in (".irp", ".irpc"):
            repeat.append(repeat[-1] * max(1, len(parts[1:]) if name == ".irp"
                                           else len("".join(parts[1:]).strip())))
            size = 0
        elif name == ".endr":
            if len(repeat) > 1:
                repeat.pop()
            size = 0
        elif name == ".fill":
            count = _count(_value(parts[0], names, what), what)
            width = _value(parts[1], names, what) if len(parts) > 1 else 1
            size = count * min(max(0, width), 8)               # GNU as caps the size at 8
        elif name in (".space", ".skip", ".zero"):
            size = max(0, _value(parts[0], names, what))
        elif name == ".org":
            size = max(0, _value(parts[0], names, what) - address)
        elif name in (".align", ".balign", ".p2align", ".balignw", ".balignl"):
            n = max(0, _value(parts[0], names, what)) if parts[0].strip() else 0
            # .p2align N pads to 2**N; .align N is 2**N on ARM/PPC and N bytes on
            # x86 (GNU as, "Align"): bound both, reading N >= 32 as bytes
            size = 1 << n if name == ".p2align" and n < 64 else \
                max(n, 1 << n) if name == ".align" and n < 32 else n
        total += size * repeat[-1]
        if total > MAX_CODE:
            raise AsmError(f"{arch.name}: {where}the source may assemble to more than "
                           f"{MAX_CODE} bytes, the limit (.fill/.space/.org/.align sizes "
                           "and .rept counts included)")


def disassemble(arch: Arch, code: bytes, address: int = 0,
                count: int = 0, isa: int | None = None) -> list[Insn]:
    """Decode ``code`` (as the CPU runs it in state ``isa``, if given); stops at
    the first byte sequence Capstone rejects."""
    return [Insn(i.address, bytes(i.bytes), i.mnemonic, i.op_str)
            for i in _cs(arch, isa).disasm(code, address, count)]


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


def disasm_one(arch: Arch, code: bytes, address: int = 0, isa: int | None = None) -> str:
    """Text of the first instruction in ``code`` (in state ``isa``, if given), or a
    hex dump if invalid."""
    insns = disassemble(arch, code, address, count=1, isa=isa)
    if insns:
        return f"{insns[0].text}  ({insns[0].bytes.hex(' ')})"
    return f"(undecodable: {code[:arch.max_insn_len].hex(' ')})"

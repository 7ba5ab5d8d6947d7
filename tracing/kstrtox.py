"""The kernel's string-to-number helpers (lib/kstrtox.c, lib/vsprintf.c), as
tracefs parsers use them (kprobe_events, event filters)."""
from __future__ import annotations

import re


def _kstrtoull(s: str, base: int, bits: int) -> int | None:
    """_kstrtoull: the whole string in ``base`` (0: 0x hex, 0 octal, else decimal),
    one trailing newline allowed; None on any error. No sign."""
    s = s[:-1] if s.endswith("\n") else s
    if base == 0:
        base = 16 if s[:2].lower() == "0x" and len(s) > 2 else 8 if s[:1] == "0" else 10
    if base == 16 and s[:2].lower() == "0x":
        s = s[2:]
    digits = "0123456789abcdef"[:base]
    if not s or any(c not in digits for c in s.lower()):
        return None
    value = int(s, base)
    return value if value < 1 << bits else None


def kstrtoull(s: str, base: int = 0, bits: int = 64) -> int | None:
    """kstrtoull: an optional '+', then :func:`_kstrtoull`."""
    return _kstrtoull(s[1:] if s.startswith("+") else s, base, bits)


def kstrtol(s: str, base: int = 0, bits: int = 64) -> int | None:
    """kstrtoll for a ``bits``-wide long: a leading '-' negates what follows it,
    which may not have a sign of its own ('-+8' is refused); else :func:`kstrtoull`."""
    if s.startswith("-"):
        value = _kstrtoull(s[1:], base, bits)
        return -value if value is not None and value <= 1 << (bits - 1) else None
    value = kstrtoull(s, base, bits)
    return value if value is not None and value < 1 << (bits - 1) else None


def simple_strtoul(s: str) -> tuple[int, str]:
    """simple_strtoul(s, &tail, 0): the longest number at the start, and the tail."""
    m = re.match(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*", s)
    if not m:
        return 0, s
    text = m.group()
    base = 16 if text[:2].lower() == "0x" else 8 if text.startswith("0") else 10
    return int(text, base), s[m.end():]

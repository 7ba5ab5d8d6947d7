"""Linux v5.10's lib/ files built unchanged as modules (tests/linux_lib/):
rbtree.c, crc32.c, and the math, CRC-16, hweight and reciprocal-division
files, each checked against an independent Python reference on every arch,
and under a kprobe on every instruction."""
from __future__ import annotations

import importlib.util
import math
import shutil
import zlib
from pathlib import Path
from typing import Callable, NamedTuple

import pytest

import patcher.instrument  # noqa: F401  (serves the module API)
import probes.kprobes  # noqa: F401
from arches import NAMES, get_arch
from kbuild import Build, ModuleError, build
from sim.guest import Guest
from test_module_headers import LINUX_LIB, _xorshift

pytestmark = pytest.mark.slow

_spec = importlib.util.spec_from_file_location("gen_crc32table", LINUX_LIB / "gen_crc32table.py")
gen_crc32table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_crc32table)


def _fnv(values: list[int]) -> int:
    h = 2166136261
    for v in values:
        h = ((h ^ (v & 0xFFFF_FFFF)) * 16777619) & 0xFFFF_FFFF
    return h


def _run(arch: str, module: Path | list[Path], workload: str, size: int) -> int:
    modules = module if isinstance(module, list) else [module]
    result = Guest(build(arch, modules=modules), workload=workload, size=size).run()
    assert result.ok, result.console
    return result.checksum


def rbtree_reference(size: int) -> int:
    """test_rbtree_run's checksum: walks, augmented max, leftmost, rules hold."""
    vals, out = _xorshift(size), []
    for kept in (range(size), range(0, size, 2)):
        keys = sorted(vals[i] % 1000 for i in kept)
        out += [sum((i + 1) * k for i, k in enumerate(keys)),
                sum((i + 1) * k for i, k in enumerate(reversed(keys))),
                max(vals[i] >> 20 for i in kept), keys[0], 1]
    return _fnv(out)


def _bytes(size: int) -> bytes:
    """The test modules' bytes: the top byte of each xorshift32 value."""
    return bytes(v >> 24 for v in _xorshift(size))


def _crc(data: bytes, crc: int, poly: int, reflected: bool, width: int) -> int:
    """An independent bit-at-a-time CRC of ``width`` bits from ``crc``, not
    inverted: least significant bit first when ``reflected`` (``poly``
    reversed), else most significant first."""
    top, mask = 1 << (width - 1), (1 << width) - 1
    for byte in data:
        if reflected:
            crc ^= byte
            for _ in range(8):
                crc = (crc >> 1) ^ (poly if crc & 1 else 0)
        else:
            crc ^= byte << (width - 8)
            for _ in range(8):
                crc = ((crc << 1) ^ (poly if crc & top else 0)) & mask
    return crc


def _crc_bitwise(data: bytes, poly: int, reflected: bool) -> int:
    """CRC-32 seeded ~0 and inverted: crc32c when reflected with 0x82F63B78,
    CRC-32/BZIP2 (= crc32_be) with 0x04C11DB7 not reflected."""
    return _crc(data, 0xFFFF_FFFF, poly, reflected, 32) ^ 0xFFFF_FFFF


def crc32_reference(size: int) -> int:
    data = _bytes(size)
    return _fnv([zlib.crc32(data), _crc_bitwise(data, 0x82F63B78, True),
                 _crc_bitwise(data, 0x04C11DB7, False), 1])


def crc32_module(arch: str, where: Path) -> Path:
    """tests/linux_lib/crc32 with the crc32table.h lib/Makefile would generate
    for ARCH (CRC_LE_BITS 64 with CONFIG_64BIT, else 32)."""
    mod = where / "crc32"
    shutil.copytree(LINUX_LIB / "crc32", mod)
    gen_crc32table.write(mod, get_arch(arch).bits)
    return mod


def test_the_crc_references_are_right() -> None:
    assert _crc_bitwise(b"123456789", 0x82F63B78, True) == 0xE3069283     # CRC-32C check
    assert _crc_bitwise(b"123456789", 0x04C11DB7, False) == 0xFC891918    # CRC-32/BZIP2
    table = gen_crc32table.crc32init_le(gen_crc32table.CRC32_POLY_LE, 64)
    assert table[0][1] == 0x77073096 and len(table) == 8


@pytest.mark.parametrize("arch", NAMES)
def test_linux_lib_rbtree_builds_unchanged(arch: str) -> None:
    assert _run(arch, LINUX_LIB / "rbtree", "rbtree:test_rbtree_run", 300) \
        == rbtree_reference(300)


@pytest.mark.parametrize("arch", NAMES)
def test_linux_lib_crc32_builds_unchanged(arch: str, tmp_path: Path) -> None:
    mod = crc32_module(arch, tmp_path)
    assert _run(arch, mod, "crc32:test_crc32_run", 1000) == crc32_reference(1000)


def gcd_reference(size: int) -> int:
    """test_gcd_run: math.gcd of pairs with a shared factor, shifted, b = 0 at every 7th."""
    xs, out = iter(_xorshift(3 * size)), []
    for i in range(size):
        a, b, k = next(xs) % 5000 + 1, next(xs) % 5000 + 1, next(xs) % 64 + 1
        out.append(math.gcd((a * k) << (i % 4), (b * k) << (i % 4) if i % 7 else 0))
    return _fnv(out)


def lcm_reference(size: int) -> int:
    """test_lcm_run: lcm and lcm_not_zero (b when a is 0) of pairs, a = 0 at every 5th."""
    xs, out = iter(_xorshift(3 * size)), []
    for i in range(size):
        k = next(xs) % 16 + 1
        a, b = (next(xs) % 3750) * k, (next(xs) % 3750 + 1) * k
        a = 0 if i % 5 == 0 else a
        out += [math.lcm(a, b), math.lcm(a, b) or b or a]
    return _fnv(out)


def _crc16_bitwise(data: bytes, crc: int, poly: int, reflected: bool) -> int:
    """CRC-16 from ``crc``, not inverted: reflected with 0xA001 (CRC-16/ARC) or
    0x8408 (KERMIT), else 0x1021 (XMODEM)."""
    return _crc(data, crc, poly, reflected, 16)


def crc16_reference(size: int) -> int:
    data = _bytes(size)
    return _fnv([_crc16_bitwise(data, 0, 0xA001, True),
                 _crc16_bitwise(data, 0xFFFF, 0xA001, True), 1])


def crc_ccitt_reference(size: int) -> int:
    data = _bytes(size)
    return _fnv([_crc16_bitwise(data, 0, 0x8408, True), _crc16_bitwise(data, 0xFFFF, 0x8408, True),
                 _crc16_bitwise(data, 0xFFFF, 0x1021, False),
                 _crc16_bitwise(data, 0, 0x1021, False)])


def crc_itu_t_reference(size: int) -> int:
    data = _bytes(size)
    return _fnv([_crc16_bitwise(data, 0, 0x1021, False),
                 _crc16_bitwise(data, 0xFFFF, 0x1021, False)])


def hweight_reference(size: int) -> int:
    xs, out = iter(_xorshift(2 * size)), []
    for _ in range(size):
        w = next(xs)
        wide = w << 32 | next(xs)
        out += [bin(w & 0xFF).count("1"), bin(w & 0xFFFF).count("1"), bin(w).count("1"),
                bin(wide).count("1")]
    return _fnv(out)


def _reciprocal_adv(d: int, prec: int) -> tuple[int, int, int, int]:
    """(m, sh, exp, is_wide_m) of Granlund and Montgomery's figure 6.2 with N = 32."""
    exp = (d - 1).bit_length()
    low, high = (1 << (32 + exp)) // d, ((1 << (32 + exp)) + (1 << (32 + exp - prec))) // d
    sh = exp
    while sh > 0 and low >> 1 < high >> 1:
        low, high, sh = low >> 1, high >> 1, sh - 1
    return high & 0xFFFF_FFFF, sh, exp, int(high > 0xFFFF_FFFF)


def reciprocal_div_reference(size: int) -> int:
    """test_reciprocal_div_run: a // d (what reciprocal_divide must give), the
    paper's m, sh1 = min(l, 1), sh2 = max(l - 1, 0), the precise variant's
    fields, and divmod of a 64-bit n by d."""
    xs, out = iter(_xorshift(5 * size)), []
    for _ in range(size):
        d = next(xs)
        d = (d >> (next(xs) % 32)) or 1
        a = next(xs)
        n = next(xs) << 32
        n |= next(xs)
        l = (d - 1).bit_length()
        m = ((1 << 32) * ((1 << l) - d) // d + 1) & 0xFFFF_FFFF
        out += [a // d, m, min(l, 1) | max(l - 1, 0) << 8]
        if d < 1 << 31:
            am, sh, exp, wide = _reciprocal_adv(d, 32)
            out += [am, sh | exp << 8 | wide << 16]
        q, r = divmod(n, d)
        out += [r, q & 0xFFFF_FFFF, q >> 32]
    return _fnv(out)


def test_the_crc16_references_are_right() -> None:
    """The catalogue's check values of "123456789" (CRC RevEng: ARC, KERMIT, XMODEM, CCITT-FALSE)."""
    check = b"123456789"
    assert _crc16_bitwise(check, 0, 0xA001, True) == 0xBB3D
    assert _crc16_bitwise(check, 0, 0x8408, True) == 0x2189
    assert _crc16_bitwise(check, 0, 0x1021, False) == 0x31C3
    assert _crc16_bitwise(check, 0xFFFF, 0x1021, False) == 0x29B1


def test_the_reciprocal_reference_divides() -> None:
    for d in (1, 2, 3, 7, 10, 641, 0x7FFF_FFFF, 0xFFFF_FFFF):
        l = (d - 1).bit_length()
        m = ((1 << 32) * ((1 << l) - d) // d + 1) & 0xFFFF_FFFF
        for a in (0, 1, d - 1, d, 12345678, 0xFFFF_FFFF):
            t = (a * m) >> 32
            assert (t + ((a - t) >> min(l, 1))) >> max(l - 1, 0) == a // d


def llist_reference(size: int) -> int:
    """test_llist_run: a stack; llist_add says whether it was empty."""
    stack = _xorshift(size)
    out = [1, 1] + [0] * (size - 1)
    out += [stack.pop() for _ in range(size // 3)]
    return _fnv(out + stack + [1, 1])


def plist_reference(size: int) -> int:
    """test_plist_run: ascending priority, equal ones in the order added; a
    requeued node goes behind the others of its priority."""
    prio = [v % 16 for v in _xorshift(size)]
    order = sorted((i for i in range(size) if i % 3), key=lambda i: prio[i])
    for i in range(1, size, 5):
        if i % 3:
            order.remove(i)
            order.insert(sum(1 for j in order if prio[j] <= prio[i]), i)
    out = [v for i in order for v in (prio[i], i)]
    return _fnv(out + [prio[order[0]], prio[order[-1]]])


def interval_tree_reference(size: int) -> int:
    """test_interval_tree_run: by brute force, the kept intervals overlapping each
    window, by start (equal starts in the order inserted)."""
    xs = iter(_xorshift(2 * size + 2 * (size // 4 + 1)))
    nodes = []
    for _ in range(size):
        start = next(xs) % 1000
        nodes.append((start, start + next(xs) % 50))
    kept = sorted((i for i in range(size) if i % 4), key=lambda i: nodes[i][0])
    out = []
    for _ in range(size // 4 + 1):
        start = next(xs) % 1000
        last = start + next(xs) % 30
        out += [i for i in kept if nodes[i][0] <= last and start <= nodes[i][1]] + [0xFFFF_FFFF]
    return _fnv(out)


def list_debug_reference(size: int) -> int:
    """test_list_debug_run: the list without every third entry, and every
    corrupting operation refused (the checks say 0, the length stays)."""
    vals = _xorshift(size)
    kept = [i for i in range(size) if i % 3]
    n = len(kept)
    return _fnv([vals[i] for i in kept] + [n, 1, 0, n, n, 1, 0, 0, n, 0, n, 1])


def klist_reference(size: int) -> int:
    """test_klist_run: the list as a Python list, a deleted node leaving it once
    no iterator holds it; get per node added, put per node gone."""
    vals = _xorshift(size)
    value = {**dict(enumerate(vals)), "behind": 1000001, "before": 1000002}
    order: list[int | str] = []
    for i in range(size):
        order.insert(0, i) if i % 3 == 0 else order.append(i)
    order.insert(order.index(1) + 1, "behind")
    order.insert(order.index(1), "before")
    out = [value[i] for i in order] + [value[i] for i in reversed(order)]
    dead = [i for i in order if isinstance(i, int) and i % 4 == 2]
    out += [1] * len(dead) + [0] * len(range(2, size, 4)) + [0]
    alive = [i for i in order if i not in {*dead, 5}]
    out += [value[i] for i in alive[alive.index(7) + 1:]]
    return _fnv(out + [size + 2, len(dead) + 1])


_M32, _M64 = (1 << 32) - 1, (1 << 64) - 1
#: xxHash's primes (doc/xxhash_spec.md of Cyan4973/xxHash).
_P32 = (2654435761, 2246822519, 3266489917, 668265263, 374761393)
_P64 = (11400714785074694791, 14029467366897019727, 1609587929392839161,
        9650029242287828579, 2870177450012600261)


def _rotl(x: int, r: int, bits: int) -> int:
    return ((x << r) | (x >> (bits - r))) & ((1 << bits) - 1)


def xxh32(data: bytes, seed: int) -> int:
    """XXH32 as the xxHash specification describes it."""
    n, i = len(data), 0
    word = lambda k: int.from_bytes(data[k:k + 4], "little")  # noqa: E731
    rnd = lambda acc, lane: _rotl((acc + lane * _P32[1]) & _M32, 13, 32) * _P32[0] & _M32  # noqa
    if n >= 16:
        acc = [(seed + _P32[0] + _P32[1]) & _M32, (seed + _P32[1]) & _M32, seed,
               (seed - _P32[0]) & _M32]
        while i + 16 <= n:
            acc = [rnd(a, word(i + 4 * j)) for j, a in enumerate(acc)]
            i += 16
        h = sum(_rotl(a, r, 32) for a, r in zip(acc, (1, 7, 12, 18))) & _M32
    else:
        h = (seed + _P32[4]) & _M32
    h = (h + n) & _M32
    while i + 4 <= n:
        h = _rotl((h + word(i) * _P32[2]) & _M32, 17, 32) * _P32[3] & _M32
        i += 4
    for byte in data[i:]:
        h = _rotl((h + byte * _P32[4]) & _M32, 11, 32) * _P32[0] & _M32
    h = (h ^ (h >> 15)) * _P32[1] & _M32
    h = (h ^ (h >> 13)) * _P32[2] & _M32
    return h ^ (h >> 16)


def xxh64(data: bytes, seed: int) -> int:
    """XXH64 as the xxHash specification describes it."""
    n, i = len(data), 0
    word = lambda k, w=8: int.from_bytes(data[k:k + w], "little")  # noqa: E731
    rnd = lambda acc, lane: _rotl((acc + lane * _P64[1]) & _M64, 31, 64) * _P64[0] & _M64  # noqa
    if n >= 32:
        acc = [(seed + _P64[0] + _P64[1]) & _M64, (seed + _P64[1]) & _M64, seed,
               (seed - _P64[0]) & _M64]
        while i + 32 <= n:
            acc = [rnd(a, word(i + 8 * j)) for j, a in enumerate(acc)]
            i += 32
        h = sum(_rotl(a, r, 64) for a, r in zip(acc, (1, 7, 12, 18))) & _M64
        for a in acc:
            h = ((h ^ rnd(0, a)) * _P64[0] + _P64[3]) & _M64
    else:
        h = (seed + _P64[4]) & _M64
    h = (h + n) & _M64
    while i + 8 <= n:
        h = (_rotl(h ^ rnd(0, word(i)), 27, 64) * _P64[0] + _P64[3]) & _M64
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (word(i, 4) * _P64[0] & _M64), 23, 64) * _P64[1] + _P64[2]) & _M64
        i += 4
    for byte in data[i:]:
        h = _rotl(h ^ (byte * _P64[4] & _M64), 11, 64) * _P64[0] & _M64
    h = (h ^ (h >> 33)) * _P64[1] & _M64
    h = (h ^ (h >> 29)) * _P64[2] & _M64
    return h ^ (h >> 32)


def test_the_xxhash_reference_gives_the_published_values() -> None:
    """The values of "", "a" and "abc" (seed 0) that xxHash's own sanity tests list."""
    assert [xxh32(m, 0) for m in (b"", b"a", b"abc")] == [0x02CC5D05, 0x550D7456, 0x32D153FF]
    assert [xxh64(m, 0) for m in (b"", b"a", b"abc")] == \
        [0xEF46DB3751D8E999, 0xD24EC4F1A98C6E5B, 0x44BC2CF5AD770999]


def xxhash_reference(size: int) -> int:
    """test_xxhash_run: both hashes of the data and of all but its last byte, per
    seed; the streaming digests equal them; -EINVAL for NULL; xxhash() word-sized."""
    data, out = _bytes(size), []
    for seed in (0, 0x9E3779B1):
        out += [xxh32(data, seed), xxh32(data[:-1], seed)]
        for v in (xxh64(data, seed), xxh64(data[:-1], seed)):
            out += [v & _M32, v >> 32]
        out += [1, 1]
    return _fnv(out + [1, 1, 1])


class _Ring:
    """A FIFO of at most ``size`` elements, as a Python list."""

    def __init__(self, size: int) -> None:
        self.size, self.items = size, []

    def put(self, vals: list[int]) -> int:
        n = min(len(vals), self.size - len(self.items))
        self.items += vals[:n]
        return n

    def take(self, n: int) -> list[int]:
        got, self.items = self.items[:n], self.items[n:]
        return got


def kfifo_reference(size: int) -> int:
    """test_kfifo_run: the fifos as Python lists of at most 16, 128 and 64
    elements; a record takes its length plus one byte and is read whole."""
    data = [v >> 24 for v in _xorshift(size)]
    out = []
    ints = _Ring(16)
    for i in range(20):
        out.append(ints.put([data[i] * 1000 + i]))
    out += [16, 1, 1, ints.items[0]]
    for _ in range(5):
        out += [1, ints.take(1)[0]]
    out.append(5)
    f = _Ring(128)
    out += [0, 128]
    fed, taken, i = 0, [], 0
    while fed < size:
        n = f.put(data[fed:fed + min(i % 29 + 1, size - fed)])
        fed += n
        got = f.take(i % 23 + 1)
        taken += got
        out += [n, len(got)]
        i += 1
    out.append(len(f.items))          # kfifo_peek_len: bytes in the fifo
    taken += f.take(len(f.items))
    out.append(len(taken))
    out += taken
    out += [0, 64, (-22) & 0xFFFF_FFFF]
    # records of 1..20 bytes with a 1-byte length in a 64-byte ring
    out.append(0)
    used, recs, i = 0, [], 0
    while True:
        n = i % 20 + 1
        if n + 1 > 64 - used:
            break
        recs.append(data[i:i + n])
        used += n + 1
        out.append(n)
        i += 1
    avail = 64 - used
    out.append(0 if avail <= 1 else min(avail - 1, 255))
    out.append(len(recs[0]))
    for r in recs:
        out += [min(len(r), 5)] + r[:5]
    out += [0, 50, 0, 30] + data[:30]
    out += [120, 120, 2, 8, 12, 1, 1, 20]
    return _fnv(out)


# lib/bitmap.c, lib/kstrtox.c and the printk formats they use. A bitmap is a
# Python int, bit i of the int being bit i of the map.
_EINVAL, _ENOMEM, _EBUSY, _ERANGE, _EOVERFLOW = -22, -12, -16, -34, -75


def _words(bits: int, n: int) -> list[int]:
    """bitmap_to_arr32: the u32 words of n bits, bit i in word i // 32."""
    bits &= (1 << n) - 1
    return [(bits >> (32 * k)) & _M32 for k in range((n + 31) // 32)]


def _ones(bits: int, n: int) -> list[int]:
    return [i for i in range(n) if bits >> i & 1]


def _first(bits: int, start: int, size: int, value: int = 1) -> int:
    """find_next_bit (value 1) or find_next_zero_bit (0): size when there is none."""
    return next((i for i in range(start, size) if bits >> i & 1 == value), size)


def bitmap_list(bits: int, n: int) -> str:
    """%*pbl: ranges of consecutive set bits, "0-3,8,10-11"."""
    runs: list[list[int]] = []
    for i in _ones(bits, n):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def bitmap_hex(bits: int, n: int) -> str:
    """%*pb: 32-bit groups of hex, most significant first, the first as wide as its bits."""
    if n <= 0:
        return ""
    groups = [f"{w:08x}" for w in reversed(_words(bits, n))]
    groups[0] = groups[0][-((n - 32 * (len(groups) - 1) + 3) // 4):]
    return ",".join(groups)


def _isspace(c: int) -> bool:
    return c in b" \t\n\v\f\r" or c == 0xA0


def _sep(c: int) -> bool:
    return _isspace(c) or c == ord(",")


def _decimal(s: bytes, i: int) -> tuple[int, int, bool]:
    """_parse_integer base 10: (value, digits, overflowed 64 bits)."""
    j = i
    while s[j:j + 1].isdigit():
        j += 1
    value = int(s[i:j]) if j > i else 0
    return value, j - i, value >> 64 != 0


def parselist(text: bytes, nbits: int) -> tuple[int, int]:
    """bitmap_parselist: (0 or -errno, the bits set before it stopped)."""
    s, i, bits = text + b"\0", 0, 0

    def number(at: int) -> tuple[int, int]:
        value, n, over = _decimal(s, at)
        if not n:
            raise ValueError(_EINVAL)
        if over or value >> 32:
            raise ValueError(_EOVERFLOW)
        return value, at + n

    try:
        while True:
            while _sep(s[i]):
                i += 1
            if s[i] in b"\0\n":
                return 0, bits
            start, i = number(i)
            end, off, group = start, start + 1, start + 1
            if not (_sep(s[i]) or s[i] in b"\0\n"):
                if s[i] != ord("-"):
                    raise ValueError(_EINVAL)
                end, i = number(i + 1)
                off = group = end + 1
                if not (_sep(s[i]) or s[i] in b"\0\n"):
                    if s[i] != ord(":"):
                        raise ValueError(_EINVAL)
                    off, i = number(i + 1)
                    if s[i] != ord("/"):
                        raise ValueError(_EINVAL)
                    group, i = number(i + 1)
            if start > end or group == 0 or off > group:
                raise ValueError(_EINVAL)
            if end >= nbits:
                raise ValueError(_ERANGE)
            for first in range(start, end + 1, group):
                for bit in range(first, first + min(end - first + 1, off)):
                    bits |= 1 << bit
            if s[i] in b"\0\n":
                return 0, bits
    except ValueError as err:
        return err.args[0], bits


def _hexval(c: int) -> int:
    ch = chr(c).lower()
    return int(ch, 16) if ch in "0123456789abcdef" else -1


def parse_hex(text: bytes, buflen: int, nbits: int) -> tuple[int, int]:
    """bitmap_parse: 32-bit chunks of hex from the right, separated by commas or spaces."""
    s, end = text + b"\0", 0
    while end < buflen and s[end] not in b"\0\n":
        end += 1
    end -= 1
    chunks, words = (nbits + 31) // 32, []
    while True:
        while end >= 0 and _sep(s[end]):
            end -= 1
        if end < 0:
            break
        if not chunks:
            return _EOVERFLOW, 0
        chunks -= 1
        word = 0
        for shift in range(0, 32, 4):
            digit = _hexval(s[end])
            end -= 1
            if digit < 0:
                return _EINVAL, 0
            word |= digit << shift
            if end < 0 or _sep(s[end]):
                break
        else:
            end -= 1
            if _hexval(s[end + 1]) >= 0:
                return _EOVERFLOW, 0
        words.append(word)
    bits = sum(w << (32 * k) for k, w in enumerate(words))
    if bits >> nbits:
        return _EOVERFLOW, 0
    return 0, bits


def kstrtoull(s: bytes, base: int) -> tuple[int, int]:
    """kstrtoull: (0 or -errno, value); a '+' first, one trailing newline allowed."""
    if s[:1] == b"+":
        s = s[1:]
    return _kstrtoull(s, base)


def _kstrtoull(s: bytes, base: int) -> tuple[int, int]:
    if base == 0:
        base = 16 if s[:1] == b"0" and s[1:2].lower() == b"x" and s[2:3] and \
            s[2:3] in b"0123456789abcdefABCDEF" else 8 if s[:1] == b"0" else 10
    if base == 16 and s[:2].lower() == b"0x":
        s = s[2:]
    n, value, over = 0, 0, False
    while n < len(s) and 0 <= _hexval(s[n]) < base:
        value = value * base + _hexval(s[n])
        over |= value >> 64 != 0
        n += 1
    if over:
        return _ERANGE, 0
    if n == 0 or s[n:] not in (b"", b"\n"):
        return _EINVAL, 0
    return 0, value


def kstrtoll(s: bytes, base: int) -> tuple[int, int]:
    if s[:1] == b"-":
        ret, value = _kstrtoull(s[1:], base)
        return (ret, 0) if ret else (_ERANGE, 0) if value > 1 << 63 else (0, -value)
    ret, value = kstrtoull(s, base)
    return (ret, 0) if ret else (_ERANGE, 0) if value >> 63 else (0, value)


def _fits(conv: tuple[int, int], lo: int, hi: int) -> tuple[int, int]:
    ret, value = conv
    return (ret, 0) if ret else (0, value) if lo <= value <= hi else (_ERANGE, 0)


def kstrtobool(s: bytes) -> tuple[int, int]:
    if s[:1] in (b"y", b"Y", b"1") or s[:2].lower() == b"on":
        return 0, 1
    if s[:1] in (b"n", b"N", b"0") or s[:2].lower() == b"of":
        return 0, 0
    return _EINVAL, 0


#: test_bitmap.c's strings.
BITMAP_LISTS = [b"0-3,8,10-11", b"0-1023:2/256", b"  1,,5 \n", b"1-9:3/4,100-120:1/7",
                b"", b"\n", b"1023", b"7,6,5", b"0-1023:0/5",
                b"5-3", b"1024", b"99999999999", b"a", b"3-", b"1-5:2", b"1-5:3/2",
                b"1-5:1/0", b"4,x", b"+5", b"1-5:1/2x"]
BITMAP_HEXES = [b"deadbeef", b"1,23456789", b"f,ffffffff,ffffffff", b"  ab cd ,, ef\n12",
                b"", b"10,00000000,00000000,00000000", b"123456789", b"12g4",
                b"1,0,0,0", b"fffffffff"]
KSTRTOS = [(b"0", 10), (b"42\n", 10), (b"42\n\n", 10), (b"+7", 10), (b"-7", 10),
           (b"0x1F", 0), (b"0X1f", 16), (b"1f", 16), (b"0777", 0), (b"0x", 0),
           (b"08", 0), (b"4294967295", 10), (b"4294967296", 10), (b"255", 10),
           (b"256", 10), (b"-128", 10), (b"-129", 10), (b"18446744073709551615", 10),
           (b"18446744073709551616", 10), (b"", 10), (b" 1", 10), (b"12a", 10),
           (b"ffffffffffffffff", 16), (b"9223372036854775808", 10),
           (b"-9223372036854775808", 10), (b"101", 2)]
BOOLS = [b"y", b"N", b"1", b"0", b"on", b"OFF", b"o", b"x", b""]


def test_the_bitmap_references_give_the_documented_values() -> None:
    """bitmap_parselist's example in lib/bitmap.c, and the %*pb/%*pbl example of
    Documentation/core-api/printk-formats.rst (bits 0, 3-6, 8-10)."""
    assert parselist(b"0-1023:2/256", 1024) == \
        (0, sum(1 << i for i in (0, 1, 256, 257, 512, 513, 768, 769)))
    assert (bitmap_hex(0x779, 16), bitmap_list(0x779, 16)) == ("0779", "0,3-6,8-10")
    assert parse_hex(b"0779", 4, 16) == (0, 0x779) and parse_hex(b"1,0", 3, 32) == (-75, 0)
    assert kstrtoull(b"0x1f\n", 0) == (0, 31) and kstrtoll(b"-0777", 0) == (0, -511)


def _zero_area(bits: int, size: int, start: int, nr: int, mask: int, offset: int) -> int:
    """bitmap_find_next_zero_area_off."""
    while True:
        index = ((_first(bits, start, size, 0) + offset + mask) & ~mask) - offset
        end = index + nr
        if end > size:
            return end
        busy = _first(bits, index, end)
        if busy == end:
            return index
        start = busy + 1


def _string(text: str) -> list[int]:
    return [*text.encode(), _M32]


def bitmap_reference(size: int) -> int:
    """test_bitmap_run over size bits; below 64, every third fixed string."""
    n, mask, out, step = size, (1 << size) - 1, [], 3 if size < 64 else 1
    vals = _xorshift(size)
    a, b, m = (sum((v >> k & 1) << i for i, v in enumerate(vals)) for k in (31, 30, 29))
    words = lambda bits: _words(bits, n)  # noqa: E731
    bit_count = lambda bits: bin(bits & mask).count("1")  # noqa: E731
    out += [bit_count(a), bit_count(b), int(a & b != 0), *words(a & b)]
    out += [1 + 2 * (a & ~b == 0), *words(a | b), 1 + 2 * (a | m == a | b), *words(a ^ b)]
    out += [int(a & ~b != 0), *words(a & ~b), *words(~a)]
    out.append(1 + 2 * (a == b) + 4 * (a & b != 0) + 8 * (a == 0) + 16 * (a == mask))
    s = size % 37 + 1
    first = n // 3
    low = (1 << first) - 1
    r = (a | ((1 << n // 2) - 1) << n // 5) & ~(((1 << n // 3) - 1) << n // 4)
    out += [*words(a >> s), *words(a << s), *words((a & low) | ((a >> 5) & ~low)),
            *words((a & ~m) | (b & m)), *words(r)]
    ones = _ones(a, n)
    out += [ones[0] if ones else n, _first(a, 0, n, 0), ones[-1] if ones else n,
            _first(a, n // 2, n), _first(a, n // 2, n, 0), *words(r)]
    # test_regions
    r = a
    for order in range(4):
        width = 1 << order
        pos = next((p for p in range(0, n - width + 1, width) if not r >> p & (1 << width) - 1),
                   _ENOMEM)
        out.append(pos)
        if pos >= 0:
            r |= ((1 << width) - 1) << pos
            out += [_EBUSY, 0]
    out += words(r)
    out += [_zero_area(r, n, 0, 3, 1, 0), _zero_area(r, n, n // 2, 2, 3, 0),
            _zero_area(r, n, 1, 4, 7, 2)]
    # test_print of a and m
    for bits in (a, m):
        text = bitmap_list(bits, n) + "\n"
        out += [len(text), *_string(text), 0, 1]
        text = bitmap_hex(bits, n) + "\n"
        out += [len(text), *_string(text), 0, 1]
        text = (bitmap_list(bits, n) + "\n")[:7]
        out += [len(text), *_string(text)]
    # test_parsers
    for text in BITMAP_LISTS[::step]:
        ret, bits = parselist(text, 1024)
        out += [ret, *(_words(bits, 1024) if ret == 0 else [])]
    for text in BITMAP_HEXES[::step]:
        ret, bits = parse_hex(text, 1 << 32, 100)
        out += [ret, *(_words(bits, 100) if ret == 0 else [])]
    out += [0, *_words(0xABCDEF, 100), 0, *_words(0b1000011100, 64), 0, *_words(0xF0F0, 64)]
    # test_kstrtox
    for text, base in KSTRTOS[::step]:
        ull, ll = kstrtoull(text, base), kstrtoll(text, base)
        out += [ull[0], ull[1] & _M32, ull[1] >> 32, ll[0], ll[1] & _M32, (ll[1] >> 32) & _M32, 1]
        for conv in (_fits(ull, 0, _M32), _fits(ll, -(1 << 31), (1 << 31) - 1),
                     _fits(ull, 0, 255), _fits(ll, -128, 127)):
            out += list(conv)
    for text in BOOLS[::step]:
        out += list(kstrtobool(text))
    return _fnv(out + [1, 1, 1, 2])


# lib/string_helpers.c
_M64 = (1 << 64) - 1
_ESCAPE_SPACE, _ESCAPE_SPECIAL, _ESCAPE_NULL, _ESCAPE_OCTAL, _ESCAPE_NP, _ESCAPE_HEX = \
    1, 2, 4, 8, 0x10, 0x20
_UNESCAPE_SPACE, _UNESCAPE_OCTAL, _UNESCAPE_HEX, _UNESCAPE_SPECIAL = 1, 2, 4, 8
_SPACES = {b"\n"[0]: b"n", b"\r"[0]: b"r", b"\t"[0]: b"t", 0x0B: b"v", 0x0C: b"f"}
_SPECIALS = {b"\\"[0]: b"\\", 0x07: b"a", 0x1B: b"e"}


def string_get_size(size: int, blk_size: int, binary: bool) -> str:
    """string_get_size: each factor cut below 2**32 by the divisor (the remainders
    dropped), their product divided down below the divisor keeping the last
    remainder, 3 significant figures rounded half up from its thousandths."""
    div = 1024 if binary else 1000
    names = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"] if binary else \
        ["B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"]
    i, rem, frac = 0, 0, ""
    if blk_size == 0:
        size = 0
    if size:
        while blk_size >> 32:
            blk_size, i = blk_size // div, i + 1
        while size >> 32:
            size, i = size // div, i + 1
        size *= blk_size
        while size >= div:
            size, rem, i = size // div, size % div, i + 1
        digits = max(3 - len(str(size)), 0)  # decimals for 3 significant figures (1000-1023 KiB: 0)
        rem = (rem * 1000 >> 10 if binary else rem) + (500, 50, 5)[digits]
        if rem >= 1000:
            rem, size = rem - 1000, size + 1
        frac = f".{rem:03d}"[:digits + 1] if digits else ""
    return f"{size & _M32}{frac} {names[i] if i < len(names) else 'UNK'}"


def _isprint(c: int) -> bool:
    """v5.10's isprint(): printable ASCII and Latin-1 from the no-break space up."""
    return 0x20 <= c < 0x7F or c >= 0xA0


def escape_mem(src: bytes, flags: int, only: bytes | None) -> bytes:
    """string_escape_mem's whole output. With a non-empty only, the bytes not in
    it (a NUL counts as in it: strchr finds the terminator) pass unescaped."""
    out = bytearray()
    for c in src:
        if (flags & _ESCAPE_NP and _isprint(c)) or (only and c not in only + b"\0"):
            out.append(c)
        elif flags & _ESCAPE_SPACE and c in _SPACES:
            out += b"\\" + _SPACES[c]
        elif flags & _ESCAPE_SPECIAL and c in _SPECIALS:
            out += b"\\" + _SPECIALS[c]
        elif flags & _ESCAPE_NULL and c == 0:
            out += b"\\0"
        elif flags & _ESCAPE_OCTAL:
            out += b"\\%03o" % c
        elif flags & _ESCAPE_HEX:
            out += b"\\x%02x" % c
        else:
            out.append(c)
    return bytes(out)


def escape_mem_ascii(src: bytes) -> bytes:
    return b"".join(bytes([c]) if 0x20 <= c < 0x7F and c not in b'"\\' else b"\\x%02x" % c
                    for c in src)


def unescape(src: bytes, size: int, flags: int) -> bytes:
    """string_unescape into size bytes (0: no limit), without the NUL it ends with."""
    s, i, out = src + b"\0\0\0\0", 0, bytearray()
    odigit = lambda c: 0x30 <= c <= 0x37  # noqa: E731
    while s[i]:
        size = (size - 1) & _M64
        if not size:
            break
        if s[i] == 0x5C and s[i + 1] and size > 1:
            i, size = i + 1, size - 1
            c = s[i]
            if flags & _UNESCAPE_SPACE and c in b"nrtvf":
                out.append({v[0]: k for k, v in _SPACES.items()}[c])
                i += 1
                continue
            if flags & _UNESCAPE_OCTAL and odigit(c):
                num, q = c & 7, i + 1
                while num < 32 and odigit(s[q]) and q - i < 3:
                    num, q = num * 8 + (s[q] & 7), q + 1
                out.append(num)
                i = q
                continue
            if flags & _UNESCAPE_HEX and c == 0x78 and _hexval(s[i + 1]) >= 0:
                num, q = _hexval(s[i + 1]), i + 2
                if _hexval(s[q]) >= 0:
                    num, q = num * 16 + _hexval(s[q]), q + 1
                out.append(num)
                i = q
                continue
            if flags & _UNESCAPE_SPECIAL and c in b'"\\ae':
                out += {0x22: b'"', 0x5C: b"\\", 0x61: b"\a", 0x65: b"\x1b"}[c]
                i += 1
                continue
            out.append(0x5C)
        out.append(s[i])
        i += 1
    return bytes(out)


#: test_string_helpers.c's inputs.
GET_SIZES = [(0, 512), (1, 512), (1100, 1), (16384, 512), (500118192, 512), (8192, 4096),
             (3000, 1900), (1, 1), (_M64, 4096), (4096, _M64), (999, 1), (1000, 1),
             (1023, 1), (1024, 1), (999999, 1), (1023999, 1), (5, 0), (12345678901, 3)]
ESCAPE_FIXED = b'a\\b"c\n\r\t\x0b\x0c\x07\x1b\x00d\x7f\x80\xa0\xff ~'
ESCAPE_FLAGS = [1, 2, 4, 8, 0x20, 15, 31, 0x30, 0x21, 0x10, 0]
ESCAPE_ONLY = [None, b"", b"\n\\b", b'"a']
UNESCAPED = [b"plain", rb"a\nb\tc\rd\ve\f", rb"\101\0\12x\400\777\8", rb"\x41\x4g\xg\x",
             rb'\"\\\a\e\q', b"tail\\", rb"\\n", rb"\x414243", rb"\1234", b""]


def test_the_string_helpers_references_give_v5_10s_test_values() -> None:
    """lib/test-string_helpers.c's string_get_size cases (v5.10)."""
    cases = {(0, 512): ("0 B", "0 B"), (1, 512): ("512 B", "512 B"),
             (1100, 1): ("1.10 kB", "1.07 KiB"), (16384, 512): ("8.39 MB", "8.00 MiB"),
             (500118192, 512): ("256 GB", "238 GiB"), (8192, 4096): ("33.6 MB", "32.0 MiB"),
             (3000, 1900): ("5.70 MB", "5.44 MiB"), (_M64, 4096): ("75.6 ZB", "64.0 ZiB"),
             (4096, _M64): ("75.6 ZB", "64.0 ZiB")}
    for (size, blk), want in cases.items():
        assert (string_get_size(size, blk, False), string_get_size(size, blk, True)) == want
    assert escape_mem(b"\n\x00\xff", 31, None) == b"\\n\\0\xff"
    assert unescape(rb"\x41\101\n", 0, 15) == b"AA\n"


def string_helpers_reference(size: int) -> int:
    """test_string_helpers_run over size pseudo-random bytes; below 64, every third
    entry of the size, flag, @only and escaped-string tables."""
    data, out, step = _bytes(size), [], 3 if size < 64 else 1
    text = lambda b: [*b, _M32]  # noqa: E731
    xs = iter(_xorshift(6 * size))
    for binary in (False, True):
        out += [v for s, b in GET_SIZES[::step] for v in text(string_get_size(s, b, binary).encode())]
        for i in range(size):
            big, blk = next(xs), next(xs) >> (i % 32)
            got = string_get_size((big << (i % 29) | next(xs)) & _M64, blk, binary)
            out += text(got.encode())
        out += text(string_get_size(123456, 1, binary).encode()[:3])
    for flags in ESCAPE_FLAGS[::step]:
        for only in ESCAPE_ONLY[::step]:
            got = escape_mem(ESCAPE_FIXED, flags, only)
            out += [len(got), *text(got)]
        got = escape_mem(data, flags, None)
        out += [len(got), *text(got), len(got), *text((got[:7] + b"#" * 8)[:8])]
    out.append(len(escape_mem(ESCAPE_FIXED, 15, None)))
    for got in (escape_mem_ascii(ESCAPE_FIXED), escape_mem_ascii(data), b"tab\\there"):
        out += [len(got), *text(got)]
    for src in UNESCAPED[::step]:
        for flags in (1, 2, 4, 8, 15, 0):
            got = unescape(src, 0, flags)
            out += [len(got), *text(got + b"\0")]
        for limit in (0, 1, 2, 5, 0):    # the limits, then string_unescape_any_inplace
            got = unescape(src, limit, 15)
            out += [len(got), *text(got + b"\0")]
    quoted = escape_mem(b'say "hi"\n\tand\\go \x1b[0m', _ESCAPE_HEX, b'\f\n\r\t\v\a\x1b\\"')
    return _fnv(out + text(quoted) + [1, _M32, *text(b"<unknown>"), 1])


class Lib(NamedTuple):
    """One lib/ file's module under tests/linux_lib/: the modules it needs built
    first (as lcm.o needs gcd.o), its reference, the size the reference test
    runs, the options it needs, and the size of the every-instruction run."""

    needs: list[str]
    reference: Callable[[int], int]
    size: int = 200
    overrides: dict[str, str] | None = None
    small: int = 12


#: The module is named as kbuild names it ('-' made '_'); its workload is
#: MOD:test_MOD_run.
LIB = {"gcd": Lib([], gcd_reference), "lcm": Lib(["gcd"], lcm_reference),
       "crc16": Lib([], crc16_reference), "crc-ccitt": Lib([], crc_ccitt_reference),
       "crc-itu-t": Lib([], crc_itu_t_reference), "hweight": Lib([], hweight_reference),
       "reciprocal_div": Lib([], reciprocal_div_reference),
       "llist": Lib([], llist_reference), "plist": Lib([], plist_reference),
       "interval_tree": Lib(["rbtree"], interval_tree_reference),
       "list_debug": Lib([], list_debug_reference, 64, {"DEBUG_LIST": "y"}),
       "klist": Lib([], klist_reference, 64), "xxhash": Lib([], xxhash_reference),
       "kfifo": Lib([], kfifo_reference, 300, small=64),
       "bitmap": Lib([], bitmap_reference, 200),
       "string_helpers": Lib([], string_helpers_reference, 200)}


def lib_build(arch: str, name: str) -> tuple[Build, str]:
    """The kernel with tests/linux_lib/NAME (and what it needs) built in, and its workload."""
    lib = LIB[name]
    mod = name.replace("-", "_")
    modules = [LINUX_LIB / n for n in lib.needs] + [LINUX_LIB / name]
    return build(arch, overrides=lib.overrides, modules=modules), f"{mod}:test_{mod}_run"


@pytest.mark.parametrize("name", list(LIB))
@pytest.mark.parametrize("arch", NAMES)
def test_linux_lib_file_builds_unchanged_and_gives_the_reference(arch: str, name: str) -> None:
    image, workload = lib_build(arch, name)
    size = LIB[name].size
    assert not image.warnings, image.warnings
    result = Guest(image, workload=workload, size=size).run()
    assert result.ok, result.console
    assert result.checksum == LIB[name].reference(size)


def test_list_debug_catches_each_corruption_with_v5_10s_message() -> None:
    """The warnings lib/list_debug.c printed, and the checks are the module's: with
    CONFIG_DEBUG_LIST=n, <linux/list.h>'s own inline checks clash with its
    definitions, as lib/Makefile builds list_debug.o only for DEBUG_LIST."""
    image, workload = lib_build("x86_64", "list_debug")
    guest = Guest(image, workload=workload, size=16)
    console = guest.run().console
    for what in ("list_add double add: new=", "list_add corruption. next->prev should be prev (",
                 "->next is LIST_POISON1 (0000000000000100)",
                 "->prev is LIST_POISON2 (0000000000000122)",
                 "list_del corruption. prev->next should be "):
        assert what in console, what
    assert guest.image.symbols["__list_add_valid"] == \
        guest.image.symbols["list_debug:__list_add_valid"]
    with pytest.raises(ModuleError, match="__list_add_valid"):
        build("x86_64", modules=[LINUX_LIB / "list_debug"])


def test_do_div_is_the_kernels_div64_32_on_32_bit_arches() -> None:
    """No libgcc: the image links (--no-undefined) and defines __div64_32 where longs are 32 bits."""
    for arch in NAMES:
        image = build(arch, modules=[LINUX_LIB / "reciprocal_div"])
        names = set(Guest(image, workload="reciprocal_div:test_reciprocal_div_run",
                          size=1).image.symbols)
        assert ("__div64_32" in names) == (get_arch(arch).bits == 32), arch
        assert not names & {"__udivdi3", "__umoddi3", "__aeabi_uldivmod"}, arch


#: (module, workload, size): each run small, since every instruction traps.
TRANSPARENT = [("sort", "sort:test_sort_run", 40), ("list_sort", "list_sort:test_list_sort_run", 40),
               ("rbtree", "rbtree:test_rbtree_run", 40), ("crc32", "crc32:test_crc32_run", 64)]


@pytest.mark.parametrize("module, workload, size", TRANSPARENT, ids=[t[0] for t in TRANSPARENT])
@pytest.mark.parametrize("arch", NAMES)
def test_a_kprobe_on_every_instruction_changes_nothing(arch: str, module: str, workload: str,
                                                        size: int, tmp_path: Path) -> None:
    """What `kisim kprobe --every-instruction MOD` does, on the four library modules: every
    probe's hits equal an unprobed run's count of that instruction, the checksum is kept."""
    from lab.transparency import every_instruction
    path = crc32_module(arch, tmp_path) if module == "crc32" else LINUX_LIB / module
    found = every_instruction(build(arch, modules=[path]), module, workload=workload, size=size)
    assert found.ok, (found.mismatches[:3], found.checksum_ok)
    assert found.probed > 0 and found.hits == found.counted and found.nmissed == 0


@pytest.mark.transparency
@pytest.mark.parametrize("name", list(LIB))
@pytest.mark.parametrize("arch", NAMES)
def test_every_instruction_of_a_linux_lib_file_is_transparent(arch: str, name: str) -> None:
    """`kisim kprobe --every-instruction MOD` over each lib/ file's module (the lib file and
    its test): every probe's hits equal an unprobed run's count of that instruction, and
    the probed run still gives the Python reference."""
    from lab.transparency import every_instruction
    image, workload = lib_build(arch, name)
    small = LIB[name].small
    found = every_instruction(image, workload.split(":")[0], workload=workload, size=small)
    assert found.ok, (found.mismatches[:3], found.checksum_ok)
    assert found.hits == found.counted > 0 and found.nmissed == 0
    assert found.checksum == LIB[name].reference(small)

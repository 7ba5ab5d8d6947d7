"""A Python port of Linux v5.10's lib/gen_crc32table.c: writes the
crc32table.h that lib/crc32.c includes, for CRC_LE_BITS == CRC_BE_BITS ==
`bits` (crc32defs.h: 64 with CONFIG_64BIT, else 32)."""
from __future__ import annotations

import sys
from pathlib import Path

CRC32_POLY_LE = 0xEDB88320          # include/linux/crc32poly.h
CRC32_POLY_BE = 0x04C11DB7
CRC32C_POLY_LE = 0x82F63B78
ENTRIES_PER_LINE = 4


def _sizes(bits: int) -> tuple[int, int]:
    """(TABLE_ROWS, TABLE_SIZE) as gen_crc32table.c derives them."""
    return (bits // 8, 256) if bits > 8 else (1, 1 << bits)


def crc32init_le(polynomial: int, bits: int) -> list[list[int]]:
    """crc32init_le_generic()."""
    rows, size = _sizes(bits)
    tab = [[0] * 256 for _ in range(rows)]
    crc, i = 1, size >> 1
    while i:
        crc = (crc >> 1) ^ (polynomial if crc & 1 else 0)
        for j in range(0, size, 2 * i):
            tab[0][i + j] = crc ^ tab[0][j]
        i >>= 1
    for i in range(size):
        crc = tab[0][i]
        for j in range(1, rows):
            crc = tab[0][crc & 0xFF] ^ (crc >> 8)
            tab[j][i] = crc
    return tab


def crc32init_be(bits: int) -> list[list[int]]:
    """crc32init_be()."""
    rows, size = _sizes(bits)
    tab = [[0] * 256 for _ in range(rows)]
    crc, i = 0x8000_0000, 1
    while i < size:
        crc = ((crc << 1) ^ (CRC32_POLY_BE if crc & 0x8000_0000 else 0)) & 0xFFFF_FFFF
        for j in range(i):
            tab[0][i + j] = crc ^ tab[0][j]
        i <<= 1
    for i in range(size):
        crc = tab[0][i]
        for j in range(1, rows):
            crc = tab[0][(crc >> 24) & 0xFF] ^ ((crc << 8) & 0xFFFF_FFFF)
            tab[j][i] = crc
    return tab


def _output_table(table: list[list[int]], rows: int, size: int, trans: str) -> str:
    """output_table()."""
    out = []
    for j in range(rows):
        out.append("{")
        for i in range(size - 1):
            if i % ENTRIES_PER_LINE == 0:
                out.append("\n")
            out.append(f"{trans}(0x{table[j][i]:08x}L), ")
        out.append(f"{trans}(0x{table[j][size - 1]:08x}L)}},\n")
    return "".join(out)


def crc32table_h(bits: int) -> str:
    """main(): the whole generated header."""
    rows, size = _sizes(bits)
    out = ["/* this file is generated - do not edit */\n\n"]
    for name, table, trans in (("crc32table_le", crc32init_le(CRC32_POLY_LE, bits), "tole"),
                               ("crc32table_be", crc32init_be(bits), "tobe"),
                               ("crc32ctable_le", crc32init_le(CRC32C_POLY_LE, bits), "tole")):
        if bits > 1:
            out.append(f"static const u32 ____cacheline_aligned {name}[{rows}][{size}] = {{")
            out.append(_output_table(table, rows, size, trans))
            out.append("};\n")
    return "".join(out)


def write(directory: Path, bits: int) -> Path:
    """Write DIRECTORY/crc32table.h, as lib/Makefile's $(obj)/crc32table.h rule."""
    path = directory / "crc32table.h"
    path.write_text(crc32table_h(bits))
    return path


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("32", "64"):
        sys.exit("usage: gen_crc32table.py 32|64 DIR  (64 on x86_64, 32 on arm and ppc32)")
    print(write(Path(sys.argv[2]), int(sys.argv[1])))

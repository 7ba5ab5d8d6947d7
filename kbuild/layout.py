"""Randomized text layouts: the same code linked in another order.

A layout is drawn from one seed. The kernel is compiled with
``-ffunction-sections`` (each function in its own ``.text.<name>``
section, as v5.10 does for LD_DEAD_CODE_DATA_ELIMINATION), and the link
is told, in a linker script generated from ``kernel/kernel.lds``:

* the order of the functions within each object (a shuffle of its
  ``.text.*`` sections; the objects keep their link order);
* the padding before each function: 0 to :data:`PAD_LINES` instruction-cache
  lines, in steps of the arch's instruction alignment (the function's own
  alignment still applies on top);
* the module load offset: 0 to :data:`MODULE_OFFSET_MAX` bytes of padding
  where the guest modules' text begins (they are linked first); the
  kernel's text after them moves with them, as behind a module of that
  size (with no module, the kernel's text is shifted alone).

Nothing else changes: the same objects (the same code bytes for every
function, outside the fields the linker relocates), the same sites, the
same workload. Why: Mytkowicz et al., "Producing wrong data without doing
anything obviously wrong!" (ASPLOS 2009) show that link order alone flips
conclusions; Stabilizer (Curtsinger and Berger, ASPLOS 2013) answers by
randomizing layout and reporting statistics over layouts.

The layout is a pure function of the seed and the objects (their names
and sections, themselves fixed by the build's inputs): the same seed and
inputs give the same image, bit for bit, and the seed is part of the
build's cache key.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from elftools.elf.elffile import ELFFile

from arches import Arch
from kbuild.errors import BuildError

#: Bump when the drawing below changes: part of every layout build's cache key.
LAYOUT_FORMAT = "kisim-layout-1"
#: What makes every function a section the linker can place alone.
FUNCTION_SECTIONS = ("-ffunction-sections",)
#: The most padding before one function, in instruction-cache lines: enough that
#: a function's offset within its line and the lines it shares with its neighbours
#: both take every value.
PAD_LINES = 4
#: The most padding where the modules' text begins: one page, every cache set
#: index of the cores' L1s (a way is at most 4 KiB: docs/timing.md) reachable.
MODULE_OFFSET_MAX = 4096
#: The largest seed (one 64-bit word, as patchcheck's).
MAX_SEED = 2 ** 63 - 1
#: The catch-all of kernel.lds's .text: the generated placements go just before it.
CATCH_ALL = "\t\t*(.text .text.*)\n"
#: Object and section names the generated script may name (nothing a glob would read).
_PLAIN = re.compile(r"[A-Za-z0-9_.\-]+\Z")


def function_sections(obj: Path) -> list[str]:
    """The executable ``.text`` and ``.text.*`` sections of ``obj``, in file order."""
    with open(obj, "rb") as f:
        return [s.name for s in ELFFile(f).iter_sections()
                if s["sh_flags"] & 0x4 and s["sh_size"]                 # SHF_EXECINSTR
                and (s.name == ".text" or s.name.startswith(".text."))
                and s.name != ".text.head"]


@dataclass(frozen=True)
class Layout:
    """One randomized layout, drawn from ``seed``."""

    seed: int

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) \
                or not 0 <= self.seed <= MAX_SEED:
            raise BuildError(f"layout seed {self.seed!r}: an integer in 0..{MAX_SEED}")

    def plan(self, arch: Arch, objs: Sequence[Path], modules: int) -> dict:
        """Where each function goes: the module offset, and for each object in link
        order its sections, each with the padding before it. ``modules``: how many
        of ``objs``, at the front, are the modules' (recorded). Objects with a name
        a linker script could not name literally are left to the catch-all, in
        their usual place."""
        rng = random.Random(self.seed)
        step = arch.insn_align
        offset = rng.randrange(0, MODULE_OFFSET_MAX + 1, step)
        objects = []
        for obj in objs:
            sections = function_sections(obj)
            if not _PLAIN.match(obj.name) or not all(_PLAIN.match(s) for s in sections):
                continue
            fixed = [s for s in sections if s == ".text"]     # assembly's, as written
            moved = [s for s in sections if s != ".text"]
            rng.shuffle(moved)
            objects.append({"object": obj.name, "sections": [
                [s, rng.randrange(0, PAD_LINES * arch.icache_line + 1, step)]
                for s in fixed + moved]})
        return {"format": LAYOUT_FORMAT, "seed": self.seed, "module_offset": offset,
                "modules": modules, "objects": objects}


def linker_script(plan: dict, template: str) -> str:
    """``template`` (kernel.lds) with ``plan``'s placements before its .text catch-all."""
    if template.count(CATCH_ALL) != 1:
        raise BuildError("kernel/kernel.lds: the .text catch-all '*(.text .text.*)' must "
                         "appear once, on its own line, for a layout to be placed before it")
    lines = [f"\t\t/* {plan['format']}, seed {plan['seed']}: the modules' load offset */",
             f"\t\t. = . + {plan['module_offset']:#x};"]
    for obj in plan["objects"]:
        for section, pad in obj["sections"]:
            if pad:
                lines.append(f"\t\t. = . + {pad:#x};")
            lines.append(f"\t\t*/{obj['object']}({section})")
    return template.replace(CATCH_ALL, "\n".join(lines) + "\n" + CATCH_ALL)


__all__ = ["CATCH_ALL", "FUNCTION_SECTIONS", "LAYOUT_FORMAT", "Layout", "MAX_SEED",
           "MODULE_OFFSET_MAX", "PAD_LINES", "function_sections", "linker_script"]

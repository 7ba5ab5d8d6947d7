"""Safe variants of v5.10's patching routines stay clean under ``--guest`` (issue 36):
more synchronization than the kernel's (x86 an extra text_poke_sync() before the int3s
and after each step; ARM an isb, PowerPC an isync, on every CPU by IPI after
patching) and another store order (x86 the tails written in reverse site order).
The variants are users' routines (tests/data/patchcheck/), and each really does
its extra step: the other CPU takes more IPIs than under the plain routine.

A clean run is no proof; these runs are short (the issue's 10,000 seeds per site
kind are a manual sweep, docs/patchcheck.md).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from patchcheck.checker import PatchChecker

DATA = Path(__file__).parent / "data" / "patchcheck"
SEEDS = range(20)

#: arch, file, the safe variant, the routine it adds to (None: v5.10's own code), the
#: site kinds it patches (x86: text_poke_bp()'s, not a kprobe's one-byte int3, which
#: v5.10 writes with text_poke() and one text_poke_sync(); no ppc32 kprobe: its
#: trap is outside Power ISA v2.03 Book II 1.8.1's patch class, so patching it under
#: execution is `unpredictable` whatever is added after, tests/test_patchcheck_cmodx.py)
VARIANTS = [
    ("x86_64", "x86_poke_bp.c", "my_poke_bp_extra_syncs", "my_poke_bp", "jump,call"),
    ("x86_64", "x86_poke_bp.c", "my_poke_bp_extra_syncs", "my_poke_bp", "ftrace"),
    ("x86_64", "x86_poke_bp.c", "my_poke_bp", None, "jump,call"),     # tails in reverse order
    ("arm", "arm_routines.c", "my_patch_isb_ipi", "my_patch", "jump,call"),
    ("arm", "arm_routines.c", "my_patch_isb_ipi", "my_patch", "kprobe"),
    # the detour first, as arch_patch_batch() writes it, then the jump
    ("x86_64", "x86_poke_bp.c", "my_poke_bp_extra_syncs", "my_poke_bp", "optprobe"),
    ("arm", "arm_routines.c", "my_patch_isb_ipi", "my_patch", "optprobe"),
    ("ppc32", "ppc_routines.c", "my_patch_isync_ipi", "my_patch", "jump,call"),
]


def _ipis_taken(arch: str, name: str | None, sites: str) -> int:
    """Run ``SEEDS`` clean; the IPIs CPU 1 took (``name`` None: the arch's own code)."""
    routine = {} if name is None else {"guest_sources": (str(DATA / FILES[arch]),),
                                       "guest_protocol": name}
    checker = PatchChecker(arch, 2, guest=True, sites=sites, **routine)
    for seed in SEEDS:
        assert checker.run_seed(seed) == [], (arch, name, sites, seed)
    return checker.guest.ipis.taken[1]


FILES = {arch: file for arch, file, *_ in VARIANTS}


@pytest.mark.slow
@pytest.mark.parametrize("arch, file, variant, plain, sites", VARIANTS)
def test_a_safe_variant_is_clean_and_does_its_extra_step(arch, file, variant, plain,
                                                         sites) -> None:
    taken = _ipis_taken(arch, variant, sites)
    assert taken > _ipis_taken(arch, plain, sites) if plain else taken > 0

"""The patch checker's guest image: the kernel's patching C, built per arch.

``kernel/patching/`` holds the generic part (v5.10 kernel/smp.c and
kernel/stop_machine.c, and the entry the host calls), which the kernel
itself is built with under CONFIG_PATCHING_IN_GUEST, and
``arches/<arch>/patching.c`` the arch's primitive (x86
``text_poke_bp_batch()``, ARM ``patch_text()``, PowerPC
``patch_instruction()``), its interrupt entry and the IPI it sends. The
pinned zig compiles them and the checker's stacks (``patchcheck/guest/``)
with the arch's kernel flags into a static ELF at 1 MiB
(``patchcheck/guest/guest.lds``), kept in the verified,
content-addressed build cache (:mod:`kbuild.cache`); an ablation is the
same sources compiled with one ``-DPC_ABLATE_...`` macro, so each variant
is a real function, not a patched one. A user's routine
(``--module FILE --guest-protocol NAME``) is compiled in beside them as a
module is (:func:`kbuild.modules.module_flags`): its warnings reported, not
fatal, unless ``--module-werror``.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from arches import Arch
from kbuild import cache
from kbuild.image import (CFLAGS, LDFLAGS, PATCHING, PATCHING_SOURCES, REPO, _rel, _run,
                          _zig, _zig_env, compiler_version, default_cache_dir, prefix_maps,
                          report_warnings)
from kbuild.errors import ModuleError
from kbuild.modules import NOT_FOR_MODULES, first_error, warnings_of
from kbuild.tools import run_tool

GUEST_DIR = Path(__file__).resolve().parent / "guest"
GUEST_SOURCES = (*PATCHING_SOURCES, GUEST_DIR / "harness.c")
LINKER_SCRIPT = GUEST_DIR / "guest.lds"
ELF = "guest.elf"
GUEST_FILES = (ELF,)
FORMAT = "kisim-patchcheck-guest-2"   # 2: sources named relative to the checkout


def guest_flags(arch: Arch, macros: tuple[str, ...] = ()) -> list[str]:
    """The kernel's compile flags for ``arch``, -O2, ``-D`` each macro, and the
    include paths: guest.h and the arch's ``patching.h`` (what a user's routine
    may call)."""
    return ["-target", arch.cc_target, *arch.cc_flags, *CFLAGS, "-O2",
            "-I", os.fspath(PATCHING), "-I", os.fspath(arch_dir(arch)),
            *(f"-D{m}" for m in macros)]


def arch_dir(arch: Arch) -> Path:
    """The directory of the arch's patching C (``arches/<arch>/``)."""
    return (REPO / arch.ops.PATCHING_C).parent


def build_guest(arch: Arch, sources: tuple[Path, ...], macros: tuple[str, ...] = (),
                cache_dir: Path | None = None, werror: bool = False,
                first_user: int = 1) -> Path:
    """The guest ELF of the generic sources plus ``sources`` (the arch's
    patching.c or a user's version of it, then a user's files) compiled with
    ``macros``; built on first use. ``sources[first_user:]`` are the user's: one
    that does not build is its first error on one line
    (:class:`kbuild.errors.ModuleError`); their warnings are reported (errors
    with ``werror``), as a module's are.

    Raises :class:`kbuild.BuildError` when the compiler or linker fails.
    """
    started = time.perf_counter()
    cache_dir = Path(cache_dir).resolve() if cache_dir is not None else default_cache_dir()
    units = (*GUEST_SOURCES, *sources)
    flags = guest_flags(arch, macros)
    user_flags = [f for f in flags if f not in NOT_FOR_MODULES] + (["-Werror"] if werror else [])
    key = cache.content_key(
        f"guest-{arch.name}",
        (FORMAT.encode(), *(p.read_bytes() for p in (*units, PATCHING / "guest.h",
                                                     arch_dir(arch) / "patching.h",
                                                     LINKER_SCRIPT)),
         "\0".join(flags).encode(), "\0".join(user_flags).encode(), "\0".join(LDFLAGS).encode(),
         compiler_version().encode(),
         "\0".join(map(os.fspath, sources[first_user:])).encode()))  # the paths warnings name

    def make(work: Path) -> dict:
        env, objs, warnings = _zig_env(cache_dir), [], []
        for unit in units:
            obj = work / f"{len(objs)}-{unit.stem}.o"
            user = unit in sources[first_user:]
            warnings += _tool(_zig("cc", *(user_flags if user else flags),
                                   *prefix_maps(REPO, work), "-c",
                                   os.fspath(unit), "-o", os.fspath(obj)),
                              f"{arch.name}: compiling {_rel(unit)}", env, unit, user)
            objs.append(obj)
        _tool(_zig("ld.lld", *LDFLAGS, "-T", os.fspath(LINKER_SCRIPT), "-o",
                   os.fspath(work / ELF), *map(os.fspath, objs)),
              f"{arch.name}: linking the patch checker's guest", env, sources[-1],
              len(sources) > first_user)
        for obj in objs:
            obj.unlink()
        return {"key": key, "sources": [_rel(u) for u in units], "macros": list(macros),
                "compiler": compiler_version(), "warnings": warnings,
                "built_seconds": round(time.perf_counter() - started, 3)}
    info, _ = cache.entry(cache_dir, key, "guest", make, GUEST_FILES)
    report_warnings(info.get("warnings", ()))
    return cache_dir / key / ELF


def _tool(cmd: list[str], what: str, env: dict[str, str], unit: Path, users: bool) -> list[str]:
    """Run the compiler or linker; a failure over a user's file is its first error,
    on one line (:class:`kbuild.modules.ModuleError`), kisim's own the whole output.
    Returns the user's file's warnings."""
    if not users:
        _run(cmd, what, env)
        return []
    proc = run_tool(cmd, what, env, REPO)
    if proc.returncode != 0:
        raise ModuleError(first_error(proc.stderr + proc.stdout, unit))
    return warnings_of(proc.stderr + proc.stdout)

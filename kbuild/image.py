"""Build a kisim guest kernel: ``.config`` -> ``autoconf.h`` -> ELF.

The toolchain is the pinned ``ziglang`` package: ``python -m ziglang cc``
(clang 18) compiles, ``python -m ziglang ld.lld`` links. The kernel
sources are ``kernel/`` (C shared by every arch, ``kernel/kernel.lds``)
plus ``arches/<arch>/entry.S`` and ``arches/<arch>/include/asm/``.

As in Linux, the configuration drives the build: kconfiglib writes
``include/generated/autoconf.h``, which every file includes, and
``CONFIG_FUNCTION_TRACER=y`` adds ``-pg``. After a first link the mcount
call sites are read from the relocations the linker kept
(``--emit-relocs``) and written to ``__mcount_loc`` by a second link, which
appends that table after ``_end`` and so moves nothing (checked).

Builds are content-addressed: the key is the SHA-256 of every kernel
source, header and linker script, the arch's entry code, the
configuration's canonical text, the compiler version and the flags. A
finished build lives in ``<cache>/<key>/`` (``vmlinux``, ``.config``,
``autoconf.h``, ``build.json``); asking again for the same inputs returns
it at once, after checking it (:mod:`kbuild.cache`). The cache directory
is ``$KISIM_CACHE``, or ``.cache/kisim`` in a source checkout, or
``~/.cache/kisim`` when kisim is installed.
"""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

import kconfig
from arches import Arch, get_arch
from kbuild import cache
from kbuild.errors import BuildError, ModuleError
from kbuild.modules import Module, first_error, load_modules, module_flags

REPO = Path(__file__).resolve().parent.parent
KERNEL = REPO / "kernel"
LINKER_SCRIPT = KERNEL / "kernel.lds"
ELF_NAME = "vmlinux"
JOBS = 2

#: Bump when the build procedure changes in a way the inputs do not show.
FORMAT = "kisim-build-2"

#: ``step(description)``: called as each build step starts (for progress).
Step = Callable[[str], None]

#: zig passes -fPIC/-fPIE for its linux targets whatever the command line
#: says; these override the relocation model at the clang -cc1 level, so
#: that the kernel is static, non-PIC code (-pg needs the linux triples).
NO_PIC = ("-Xclang", "-mrelocation-model", "-Xclang", "static",
          "-Xclang", "-pic-level", "-Xclang", "0")

CFLAGS = ("-std=gnu11", "-g", "-ffreestanding", "-nostdinc", "-fno-builtin",
          "-fno-common", "-fno-strict-aliasing", "-fno-stack-protector",
          "-fno-unwind-tables", "-fno-asynchronous-unwind-tables",
          "-fno-omit-frame-pointer", "-fno-pic", "-fno-pie", *NO_PIC,
          "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror")
FTRACE_CFLAGS = ("-pg",)
#: The optimization level each choice of kconfig/Kconfig.optimize selects
#: (init/Kconfig and the top Makefile: -O2 by default, -Os for size).
OPT_CFLAGS = {"CC_OPTIMIZE_FOR_SIZE": "-Os", "CC_OPTIMIZE_FOR_PERFORMANCE": "-O2"}
LDFLAGS = ("-static", "-nostdlib", "--emit-relocs", "--build-id=none",
           "--no-undefined", "-z", "norelro")


@dataclass
class Build:
    """A built kernel image and what it was built from."""

    arch: str
    elf: Path
    config: dict[str, str]
    key: str
    cached: bool
    seconds: float = 0.0                     # wall time of this call
    mcount_sites: int = 0                    # entries in __mcount_loc
    modules: tuple[Module, ...] = ()         # guest modules linked in (kbuild.modules)
    info: dict = field(default_factory=dict)  # build.json

    @property
    def enabled(self) -> list[str]:
        """The bool options set to y, without the CONFIG_ prefix."""
        return [name for name, value in self.config.items() if value == "y"]

    def is_set(self, name: str) -> bool:
        return self.config.get(name.removeprefix("CONFIG_")) == "y"


def default_cache_dir() -> Path:
    """Where builds are kept (see :func:`kbuild.cache.default_cache_dir`)."""
    return cache.default_cache_dir(REPO)


def _zig(*args: str) -> list[str]:
    return [sys.executable, "-m", "ziglang", *args]


def _zig_env(cache_dir: Path) -> dict[str, str]:
    """Keep zig's own caches inside ours (CI may have no writable HOME)."""
    env = dict(os.environ)
    env.setdefault("ZIG_GLOBAL_CACHE_DIR", os.fspath(cache_dir / "zig"))
    env.setdefault("ZIG_LOCAL_CACHE_DIR", os.fspath(cache_dir / "zig"))
    return env


@functools.lru_cache(maxsize=None)
def compiler_version() -> str:
    """``zig version`` and the clang it bundles, e.g. ``zig 0.13.0 / clang version 18.1.6``."""
    try:
        env = _zig_env(default_cache_dir())
        zig = subprocess.run(_zig("version"), capture_output=True, text=True,
                             check=True, env=env).stdout.strip()
        clang = subprocess.run(_zig("cc", "--version"), capture_output=True, text=True,
                               check=True, env=env).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError) as err:
        raise BuildError(f"the zig toolchain does not run ({sys.executable} -m ziglang): "
                         f"{err}") from None
    return f"zig {zig} / {clang.split(' (')[0]}"


def source_files(arch: Arch) -> list[Path]:
    """The files that are compiled, in a stable order."""
    return sorted(KERNEL.rglob("*.c")) + [REPO / "arches" / arch.name / "entry.S"]


def input_files(arch: Arch) -> list[Path]:
    """Every file whose content the image depends on (the cache key)."""
    arch_dir = REPO / "arches" / arch.name
    files = set(source_files(arch)) | {LINKER_SCRIPT}
    files |= set(KERNEL.rglob("*.h")) | set((arch_dir / "include").rglob("*.h"))
    return sorted(files)


def compile_flags(arch: Arch, config: dict[str, str]) -> list[str]:
    level = next((flag for name, flag in OPT_CFLAGS.items() if config.get(name) == "y"), "-O2")
    flags = ["-target", arch.cc_target, *arch.cc_flags, *CFLAGS, level]
    if config.get("FUNCTION_TRACER") == "y":
        flags += FTRACE_CFLAGS
    return flags


def cache_key(arch: Arch, config_text: str, flags: list[str],
              modules: tuple[Module, ...] = ()) -> str:
    h = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        h.update(f"{label}\0{len(data)}\0".encode())
        h.update(data)

    add("format", FORMAT.encode())
    add("arch", arch.name.encode())
    add("compiler", compiler_version().encode())
    add("cflags", "\0".join(flags).encode())
    add("ldflags", "\0".join(LDFLAGS).encode())
    add("config", config_text.encode())
    for path in input_files(arch):
        add(_rel(path), path.read_bytes())
    for module in modules:               # the name, where diagnostics point, the bytes
        add(f"module:{module.name}", module.compiled_text().encode())
    return h.hexdigest()


def _load(arch: str, config: str | os.PathLike[str] | None,
          overrides: Mapping[str, str] | None = None):
    """The configuration: a .config (None: defconfig), then ``overrides`` (NAME -> value)."""
    kconf = kconfig.defconfig(arch) if config is None else kconfig.load_config(arch, config)
    wanted = {name.removeprefix("CONFIG_"): str(value) for name, value in (overrides or {}).items()}
    kconfig.set_values(kconf, wanted, arch)
    return kconf


def _run(cmd: list[str], what: str, env: dict[str, str]) -> None:
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        diagnostics = (proc.stderr + proc.stdout).strip()
        raise BuildError(f"{what} failed (exit {proc.returncode}):\n{diagnostics}")


def _rel(path: Path) -> str:
    """``path`` relative to the repository when inside it (stable in messages and DWARF)."""
    try:
        return path.relative_to(REPO).as_posix()
    except ValueError:
        return os.fspath(path)


def _object_name(src: Path) -> str:
    return _rel(src).strip("/").replace("/", "__").rsplit(".", 1)[0] + ".o"


def mcount_call_sites(elf_path: Path, arch: Arch) -> list[int]:
    """Addresses of the mcount calls in a linked image, from its kept relocations.

    The address is the call instruction's: the relocation's offset less
    the arch's ``mcount_reloc_offset`` (x86-64 ``e8 rel32``: the rel32 is
    one byte in; ARM and PowerPC ``bl``: the relocation is at the insn).
    """
    sites = []
    with open(elf_path, "rb") as f:
        elf = ELFFile(f)
        symtab = elf.get_section_by_name(".symtab")
        for section in elf.iter_sections():
            if not isinstance(section, RelocationSection):
                continue
            target = elf.get_section(section["sh_info"])
            if not target["sh_flags"] & 0x4:      # SHF_EXECINSTR
                continue
            for rel in section.iter_relocations():
                sym = symtab.get_symbol(rel["r_info_sym"])
                if sym.name in arch.mcount_symbols:
                    sites.append(rel["r_offset"] - arch.mcount_reloc_offset)
    return sorted(set(sites))


def _alloc_layout(elf_path: Path) -> dict[str, tuple[int, int]]:
    with open(elf_path, "rb") as f:
        return {s.name: (s["sh_addr"], s["sh_size"]) for s in ELFFile(f).iter_sections()
                if s["sh_flags"] & 0x2 and s.name != "__mcount_loc"}   # SHF_ALLOC


def _text_bytes(elf_path: Path) -> bytes:
    with open(elf_path, "rb") as f:
        return ELFFile(f).get_section_by_name(".text").data()


def _mcount_loc_source(arch: Arch, sites: list[int]) -> str:
    directive = ".quad" if arch.bits == 64 else ".long"
    lines = ["/* Generated by kbuild: every mcount call site. */",
             '\t.section __mcount_loc, "a"', f"\t.balign {arch.word}"]
    lines += [f"\t{directive} {addr:#x}" for addr in sites]
    return "\n".join(lines) + "\n"


def _compile_module(module: Module, cmd: list[str], env: dict[str, str]) -> None:
    """Compile one module; its first error on one line (:class:`ModuleError`)."""
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise ModuleError(first_error(proc.stderr + proc.stdout, module.path))


def _compile_all(arch: Arch, flags: list[str], include: Path, objdir: Path,
                 env: dict[str, str], step: Step, modules: tuple[Module, ...] = ()) -> list[Path]:
    arch_include = REPO / "arches" / arch.name / "include"
    incs = ["-I", os.fspath(include), "-I", os.fspath(KERNEL / "include"),
            "-I", os.fspath(arch_include)]

    def one(src: Path) -> Path:
        obj = objdir / _object_name(src)
        rel = _rel(src)
        step(f"{arch.name}: compiling {rel}")
        _run(_zig("cc", *flags, *incs, "-c", rel, "-o", os.fspath(obj)),
             f"{arch.name}: compiling {rel}", env)
        return obj

    def module(mod: Module) -> Path:
        src = objdir / f"module__{mod.name}.c"
        src.write_text(mod.compiled_text())
        obj = src.with_suffix(".o")
        step(f"{arch.name}: compiling module {mod.name} ({mod.path})")
        _compile_module(mod, _zig("cc", *module_flags(flags, mod), *incs, "-c",
                                  os.fspath(src), "-o", os.fspath(obj)), env)
        return obj

    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        futures = ([pool.submit(module, mod) for mod in modules]
                   + [pool.submit(one, src) for src in source_files(arch)])
        errors = [f.exception() for f in futures if f.exception() is not None]
        if errors:
            raise errors[0]      # a module's error first: the kernel itself builds
        return [f.result() for f in futures]


def _link(objs: list[Path], out: Path, arch: Arch, env: dict[str, str],
          modules: tuple[Module, ...] = ()) -> None:
    cmd = _zig("ld.lld", *LDFLAGS, "-T", os.fspath(LINKER_SCRIPT), "-o", os.fspath(out),
               *map(os.fspath, objs))
    if not modules:
        _run(cmd, f"{arch.name}: linking {out.name}", env)
        return
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
    if proc.returncode != 0:        # with modules linked in, theirs is the likely fault
        raise ModuleError(first_error(proc.stderr + proc.stdout,
                                      ", ".join(os.fspath(m.path) for m in modules)))


def _build_into(arch: Arch, kconf, config: dict[str, str], flags: list[str],
                work: Path, env: dict[str, str], step: Step,
                modules: tuple[Module, ...] = ()) -> dict:
    include = work / "include"
    kconfig.write_autoconf(kconf, include / "generated" / "autoconf.h")
    kconfig.write_config(kconf, work / ".config")
    objdir = work / "obj"
    objdir.mkdir()
    started = time.perf_counter()
    objs = _compile_all(arch, flags, include, objdir, env, step, modules)
    step(f"{arch.name}: linking")
    compiled = time.perf_counter()
    elf = work / ELF_NAME
    sites: list[int] = []
    if config.get("FUNCTION_TRACER") == "y":
        first = work / (ELF_NAME + ".pass1")
        _link(objs, first, arch, env, modules)
        sites = mcount_call_sites(first, arch)
        if not sites:
            raise BuildError(f"{arch.name}: CONFIG_FUNCTION_TRACER=y but the image has "
                             f"no call to any of {', '.join(arch.mcount_symbols)}")
        table = objdir / "mcount_loc.S"
        table.write_text(_mcount_loc_source(arch, sites))
        table_obj = objdir / "mcount_loc.o"
        _run(_zig("cc", "-target", arch.cc_target, *arch.cc_flags, "-c", os.fspath(table),
                  "-o", os.fspath(table_obj)), f"{arch.name}: assembling __mcount_loc", env)
        _link(objs + [table_obj], elf, arch, env, modules)
        if (_alloc_layout(first) != _alloc_layout(elf)
                or _text_bytes(first) != _text_bytes(elf)):
            raise BuildError(f"{arch.name}: adding __mcount_loc moved the image; "
                             "it must stay last in kernel/kernel.lds")
        first.unlink()
    else:
        _link(objs, elf, arch, env, modules)
    shutil.rmtree(objdir)
    return {"compile_seconds": round(compiled - started, 3),
            "link_seconds": round(time.perf_counter() - compiled, 3),
            "mcount_sites": len(sites),
            "modules": [{"name": m.name, "path": os.fspath(m.path), "sha256": m.digest}
                        for m in modules]}


def build(arch: str, config: str | os.PathLike[str] | None = None, *,
          overrides: Mapping[str, str] | None = None,
          cache_dir: Path | None = None, step: Step | None = None,
          modules: Iterable[str | os.PathLike[str] | Module] = ()) -> Build:
    """Build (or fetch from the cache) the kernel for ``arch``.

    ``config`` is a .config file; None means the arch's defconfig.
    ``overrides`` sets options on top of it, e.g. ``{"MARKERS": "n"}``
    (each must take, as in a strict .config load). A cache entry that
    fails verification is rebuilt, with one line on stderr. ``step`` is
    told each compile and link step as it starts. ``modules`` are guest
    module sources (:mod:`kbuild.modules`) linked into the image; their
    bytes are part of the cache key. Raises
    :class:`kconfig.KconfigError` for a bad configuration and
    :class:`BuildError` when the compiler or linker fails (a module's error:
    :class:`ModuleError`, one line).
    """
    started = time.perf_counter()
    spec = get_arch(arch)
    mods = load_modules(modules)
    kconf = _load(spec.name, config, overrides)
    values = kconfig.enabled(kconf)
    flags = compile_flags(spec, values)
    key = cache_key(spec, kconfig.config_hash_text(kconf), flags, mods)
    cache_dir = Path(cache_dir).resolve() if cache_dir is not None else default_cache_dir()
    final = cache_dir / key
    info, why = cache.verify(final, key) if final.exists() else (None, "")
    cached = info is not None
    if info is None:
        work = cache.new_work_dir(cache_dir, spec.name)
        try:
            built = _build_into(spec, kconf, values, flags, work, _zig_env(cache_dir),
                                step or (lambda _: None), mods)
            built.update(arch=spec.name, key=key, compiler=compiler_version(),
                         cflags=flags, ldflags=list(LDFLAGS), config=values,
                         built_seconds=round(time.perf_counter() - started, 3))
            cache.write_meta(work, built)
            info = cache.install(work, final, key)
        finally:
            cache.discard(work)
        if why:
            print(f"kisim: cache entry {final} was corrupt ({why}); rebuilt", file=sys.stderr)
    return Build(arch=spec.name, elf=final / ELF_NAME, config=values, key=key,
                 cached=cached, seconds=time.perf_counter() - started,
                 mcount_sites=info.get("mcount_sites", 0), info=info, modules=mods)


__all__ = ["Build", "BuildError", "Module", "ModuleError", "build", "cache_key", "compiler_version",
           "default_cache_dir", "mcount_call_sites"]

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection
from elftools.elf.sections import SymbolTableSection

import kconfig
from arches import Arch, get_arch
from kbuild import cache
from kbuild.errors import BuildError, ModuleError
from kbuild.layout import FUNCTION_SECTIONS, LAYOUT_FORMAT, Layout, linker_script
from kbuild.modules import Module, first_error, load_modules, module_flags, warnings_of
from kbuild.tools import refuse_special_includes, run_tool, tool_pool

REPO = Path(__file__).resolve().parent.parent
KERNEL = REPO / "kernel"
LINKER_SCRIPT = KERNEL / "kernel.lds"
#: The kernel's own patching C (kernel/patching/guest.h): built into the kernel with
#: CONFIG_PATCHING_IN_GUEST, with the arch's ``guest_patching`` C, and into the patch
#: checker's guest (:mod:`patchcheck.guest_image`).
PATCHING = KERNEL / "patching"
PATCHING_SOURCES = (PATCHING / "smp.c", PATCHING / "entry.c")
#: Where the kernel built with CONFIG_PATCHING_IN_GUEST maps its image a second
#: time, writable, for text_poke() (guest.h PC_TEXT_ALIAS; kernel.lds loads at 1 MiB).
PATCHING_TEXT_BASE = 0x100000
PATCHING_TEXT_ALIAS = 0x4000_0000
ELF_NAME = "vmlinux"
#: The suffix of the cache entry holding the objects every layout of a build shares.
OBJECTS = "-objects"
JOBS = 2
#: Memory an image (with its modules) may take, .bss included: the kernel
#: alone takes under 8 MiB; the machine maps it all up front (sim/machine.py).
MAX_IMAGE_BYTES = 256 << 20

#: Bump when the build procedure changes in a way the inputs do not show.
FORMAT = "kisim-build-4"      # 4: sources named relative to the checkout (prefix_maps)

#: ``step(description)``: called as each build step starts (for progress).
Step = Callable[[str], None]

#: zig passes -fPIC/-fPIE for its linux targets whatever the command line
#: says; these override the relocation model at the clang -cc1 level, so
#: that the kernel is static, non-PIC code (-pg needs the linux triples).
NO_PIC = ("-Xclang", "-mrelocation-model", "-Xclang", "static",
          "-Xclang", "-pic-level", "-Xclang", "0")

#: ``-nostdinc`` alone leaves zig's libc headers on the path (zig passes them with
#: ``-isystem``); with ``-nostdlib`` zig adds none, and the path holds kisim's
#: headers plus the compiler's own (stdarg.h & co.), as v5.10's NOSTDINC_FLAGS
#: (``-nostdinc -isystem $(cc -print-file-name=include)``).
CFLAGS = ("-std=gnu11", "-g", "-ffreestanding", "-nostdinc", "-nostdlib", "-fno-builtin",
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
    warnings: tuple[str, ...] = ()           # the modules' compiler warnings, one line each
    info: dict = field(default_factory=dict)  # build.json
    layout: int | None = None                # the seed of its randomized layout (kbuild.layout)

    @property
    def spec(self) -> Arch:
        """The arch this kernel runs on: :attr:`arch` as its config builds it
        (:meth:`arches.base.Arch.for_config`)."""
        return get_arch(self.arch).for_config(self.config)

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
        zig = run_tool(_zig("version"), "zig version", env, REPO)
        clang = run_tool(_zig("cc", "--version"), "zig cc --version", env, REPO)
        zig.check_returncode()
        clang.check_returncode()
    except (OSError, subprocess.CalledProcessError) as err:
        raise BuildError(f"the zig toolchain does not run ({sys.executable} -m ziglang): "
                         f"{err}") from None
    return f"zig {zig.stdout.strip()} / {clang.stdout.splitlines()[0].split(' (')[0]}"


def patching_sources(arch: Arch) -> tuple[Path, ...]:
    """The kernel's patching C for ``arch``: the generic part and the arch's
    (its ``guest_patching`` capability's PATCHING_C); none without one."""
    if "guest_patching" not in arch.capabilities:
        return ()
    return (*PATCHING_SOURCES, REPO / arch.ops.PATCHING_C)


def source_files(arch: Arch, config: Mapping[str, str] | None = None) -> list[Path]:
    """The files that are compiled for ``config``, in a stable order."""
    kernel = [p for p in sorted(KERNEL.rglob("*.c")) if PATCHING not in p.parents]
    extra = patching_sources(arch) if (config or {}).get("PATCHING_IN_GUEST") == "y" else ()
    return kernel + [REPO / "arches" / arch.name / "entry.S", *extra]


def input_files(arch: Arch) -> list[Path]:
    """Every file whose content the image depends on (the cache key)."""
    arch_dir = REPO / "arches" / arch.name
    files = set(source_files(arch)) | set(patching_sources(arch)) | {LINKER_SCRIPT}
    files |= set(KERNEL.rglob("*.h")) | set((arch_dir / "include").rglob("*.h"))
    return sorted(files)


def compile_flags(arch: Arch, config: dict[str, str]) -> list[str]:
    level = next((flag for name, flag in OPT_CFLAGS.items() if config.get(name) == "y"), "-O2")
    flags = ["-target", arch.cc_target, *arch.cc_flags, *CFLAGS, level]
    if config.get("FUNCTION_TRACER") == "y":
        flags += FTRACE_CFLAGS
    return flags


def patching_flags(flags: list[str], config: Mapping[str, str]) -> list[str]:
    """The kernel's flags for its patching C: not traced (v5.10 builds
    alternative.o, patch.o and code-patching.o without -pg, as ftrace itself
    patches through them), and guest.h's memory for the kernel."""
    return [f for f in flags if f not in FTRACE_CFLAGS] + [
        "-I", os.fspath(PATCHING), f"-DPC_TEXT_BASE={PATCHING_TEXT_BASE:#x}UL",
        f"-DPC_TEXT_ALIAS={PATCHING_TEXT_ALIAS:#x}UL", f"-DPC_NR_CPUS={config['NR_CPUS']}"]


def cache_key(arch: Arch, config_text: str, flags: list[str],
              modules: tuple[Module, ...] = (), layout: Layout | None = None) -> str:
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
    for module in modules:               # the name, where diagnostics point, every file
        add(f"module:{module.name}",       # fsencode: a path need not be UTF-8
            b"\0".join(map(os.fsencode, (module.path, module.root, module.digest)))
            + b"\0".join(os.fsencode(f.path) for f in module.sources))
    if layout is not None:
        add("layout", f"{LAYOUT_FORMAT}\0{layout.seed}".encode())
    return h.hexdigest()


def _load(arch: str, config: str | os.PathLike[str] | None,
          overrides: Mapping[str, str] | None = None):
    """The configuration: a .config (None: defconfig), then ``overrides`` (NAME -> value)."""
    if overrides is not None and not isinstance(overrides, Mapping):
        raise TypeError(f"overrides must be a mapping of NAME to value, not "
                        f"{type(overrides).__name__}")
    kconf = kconfig.defconfig(arch) if config is None else kconfig.load_config(arch, config)
    wanted = {name.removeprefix("CONFIG_"): str(value) for name, value in (overrides or {}).items()}
    kconfig.set_values(kconf, wanted, arch)
    return kconf


def _run(cmd: list[str], what: str, env: dict[str, str]) -> None:
    proc = run_tool(cmd, what, env, REPO)
    if proc.returncode != 0:
        diagnostics = (proc.stderr + proc.stdout).strip()
        raise BuildError(f"{what} failed (exit {proc.returncode}):\n{diagnostics}")


def prefix_maps(*dirs: Path) -> list[str]:
    """``-ffile-prefix-map`` of each of ``dirs`` to ``.``, a directory inside another
    last (the compiler takes the last that matches): the debug information and
    ``__FILE__`` name sources relative to the checkout and the build directory, so an
    image is the same bytes wherever either lies, as its cache key, which holds
    neither, says."""
    return [f"-ffile-prefix-map={os.fspath(d)}=."
            for d in sorted(dirs, key=lambda d: len(os.fspath(d)))]


def _rel(path: Path) -> str:
    """``path`` relative to the repository when inside it (stable in messages and DWARF)."""
    try:
        return path.relative_to(REPO).as_posix()
    except ValueError:
        return os.fspath(path)


def _object_name(src: Path) -> str:
    return _rel(src).strip("/").replace("/", "__").rsplit(".", 1)[0] + ".o"


def _module_object_name(module: Module, rel: str) -> str:
    return f"module__{module.name}__{rel.replace('/', '__')}.o"


def _object_names(arch: Arch, config: Mapping[str, str], modules: tuple[Module, ...]
                  ) -> list[str]:
    """The objects of a build in link order: the modules' first, then the kernel's."""
    return ([_module_object_name(m, f.rel) for m in modules for f in m.sources]
            + [_object_name(src) for src in source_files(arch, config)])


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


def _apply_relocate(arch: Arch, modules: tuple[Module, ...], module_objs: list[Path]) -> None:
    """The module loader's refusal of an mcount call it cannot relocate
    (:attr:`Arch.mcount_call_refused`), in its words: ``MODULE: section N reloc I
    sym 'NAME': why`` (v5.10 arch/arm/kernel/module.c ``apply_relocate``, which
    counts the object's sections and each section's relocations so)."""
    if not arch.mcount_call_refused:
        return
    objs = iter(module_objs)
    for module in modules:
        for obj in [next(objs) for _ in module.sources]:
            with open(obj, "rb") as f:
                elf = ELFFile(f)
                symtab = elf.get_section_by_name(".symtab")
                for index, section in enumerate(elf.iter_sections()):
                    if not isinstance(section, RelocationSection):
                        continue
                    for i, rel in enumerate(section.iter_relocations()):
                        why = arch.mcount_call_refused.get(rel["r_info_type"])
                        name = symtab.get_symbol(rel["r_info_sym"]).name
                        if why and name in arch.mcount_symbols:
                            raise ModuleError(f"{module.path}: {module.name}: section {index} "
                                              f"reloc {i} sym '{name}': {why}")


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


def _compile_module(module: Module, cmd: list[str], env: dict[str, str], copy: Path) -> list[str]:
    """Compile one source of a module: its warnings, or its first error on one
    line (:class:`ModuleError`), naming the user's files, not the copies."""
    source = Path(cmd[cmd.index("-c") + 1])
    files = {copy / f.rel: (os.fspath(f.path), f.data) for f in module.sources + module.headers}
    refuse_special_includes(files, source,
                            [Path(cmd[i + 1]) for i, arg in enumerate(cmd) if arg == "-I"], REPO)
    proc = run_tool(cmd, f"{files[source][0]}: compiling module {module.name}", env, REPO)
    diagnostics = (proc.stderr + proc.stdout).replace(f"{copy}/", f"{module.root}/")
    if proc.returncode != 0:
        raise ModuleError(first_error(diagnostics, module.path))
    return warnings_of(diagnostics)


def _compile_all(arch: Arch, flags: list[str], config: Mapping[str, str], include: Path,
                 objdir: Path, env: dict[str, str], step: Step,
                 modules: tuple[Module, ...] = ()) -> tuple[list[Path], list[str]]:
    arch_include = REPO / "arches" / arch.name / "include"
    # where headers are found, and how every path is named in the image (prefix_maps)
    paths = ["-I", os.fspath(include), "-I", os.fspath(KERNEL / "include"),
             "-I", os.fspath(arch_include), *prefix_maps(REPO, objdir.parent)]
    patching = set(patching_sources(arch))

    def one(src: Path) -> Path:
        obj = objdir / _object_name(src)
        rel = _rel(src)
        step(f"{arch.name}: compiling {rel}")
        own = patching_flags(flags, config) if src in patching else flags
        _run(_zig("cc", *own, *paths, "-c", rel, "-o", os.fspath(obj)),
             f"{arch.name}: compiling {rel}", env)
        return obj

    def module(mod: Module, copy: Path, src: Path, rel: str) -> Path:
        obj = objdir / _module_object_name(mod, rel)
        step(f"{arch.name}: compiling module {mod.name} ({rel})")
        warnings.extend(_compile_module(
            mod, _zig("cc", *module_flags(flags, mod), *paths, "-I", os.fspath(copy),
                      "-c", os.fspath(src), "-o", os.fspath(obj)), env, copy))
        return obj

    warnings: list[str] = []
    units = [(mod, objdir / f"module__{mod.name}", src, f.rel) for mod in modules
             for src, f in mod.write_tree(objdir / f"module__{mod.name}")]
    with tool_pool(JOBS) as pool:
        futures = ([pool.submit(module, *unit) for unit in units]
                   + [pool.submit(one, src) for src in source_files(arch, config)])
        errors = [f.exception() for f in futures if f.exception() is not None]
        if errors:
            raise errors[0]      # a module's error first: the kernel itself builds
        return [f.result() for f in futures], sorted(set(warnings))


def _defined(obj: Path) -> dict[tuple[str | None, str], str]:
    """The functions and data an object defines: (its source file as ``STT_FILE``
    names it, or None for a global, name) -> binding (``STB_LOCAL``, ``STB_GLOBAL``,
    ``STB_WEAK``)."""
    found: dict[tuple[str | None, str], str] = {}
    unit = None
    with open(obj, "rb") as f:
        for table in ELFFile(f).iter_sections():
            if not isinstance(table, SymbolTableSection):
                continue
            for sym in table.iter_symbols():
                kind, bind = sym["st_info"]["type"], sym["st_info"]["bind"]
                if kind == "STT_FILE":
                    unit = sym.name
                elif (kind in ("STT_FUNC", "STT_OBJECT") and sym.name
                      and not sym.name.startswith(".L")     # assembler-local labels
                      and sym["st_shndx"] != "SHN_UNDEF"):
                    found[(unit if bind == "STB_LOCAL" else None, sym.name)] = bind
    return found


def _module_symbols(arch: Arch, config: Mapping[str, str], modules: tuple[Module, ...],
                    module_objs: list[Path], kernel_objs: list[Path]) -> list[dict]:
    """What each module defines, for :meth:`sim.elf.SymbolTable.bind_modules`:
    ``locals`` as [STT_FILE, name] pairs, ``globals`` as names.

    A module may not define a function or datum of a kernel symbol's name
    unless both are ``static``: not even a global one where the kernel's is
    ``static`` (``sys_getppid``), as kisim finds kernel code by name
    (kprobes' ``symbol_name``, the host's own lookups), which would find the
    module's. Only a kernel ``__weak`` definition may be replaced, as the
    linker allows. Otherwise :class:`ModuleError` ``duplicate symbol``, as
    ld.lld says for two global definitions. Two ``static`` ones (a header's
    ``static inline`` emitted in both) are left to the lookups, which refuse
    the ambiguous name (:class:`sim.elf.SymbolTable`). ``module_objs``: each
    module's objects in turn.
    """
    kernel: dict[str, tuple[str, str]] = {}
    for src, obj in zip(source_files(arch, config), kernel_objs):
        for (_, name), bind in _defined(obj).items():
            if bind != "STB_WEAK":
                kernel.setdefault(name, (_rel(src), bind))
    record = []
    objs = iter(module_objs)
    for module in modules:
        defined: dict[tuple[str | None, str], str] = {}
        for obj in [next(objs) for _ in module.sources]:
            defined.update(_defined(obj))
        clash = next((name for (_, name), bind in defined.items() if name in kernel
                      and not bind == kernel[name][1] == "STB_LOCAL"), None)
        if clash is not None:
            raise ModuleError(f"{module.path}: duplicate symbol: {clash} (the kernel defines "
                              f"it in {kernel[clash][0]}; a module may not redefine a kernel "
                              "symbol)")
        record.append({"locals": sorted([unit, name] for unit, name in defined if unit),
                       "globals": sorted(name for unit, name in defined if unit is None)})
    return record


def _link(objs: list[Path], out: Path, arch: Arch, env: dict[str, str],
          modules: tuple[Module, ...] = (), script: Path = LINKER_SCRIPT) -> None:
    cmd = _zig("ld.lld", *LDFLAGS, "-T", os.fspath(script), "-o", os.fspath(out),
               *map(os.fspath, objs))
    if not modules:
        _run(cmd, f"{arch.name}: linking {out.name}", env)
        return
    proc = run_tool(cmd, f"{arch.name}: linking {out.name}", env, REPO)
    if proc.returncode != 0:        # with modules linked in, theirs is the likely fault
        raise ModuleError(first_error(proc.stderr + proc.stdout,
                                      ", ".join(os.fspath(m.path) for m in modules)))
    _check_size(modules, "the image with these modules takes", _memory_span(out))


def _check_size(modules: tuple[Module, ...], what: str, size: int) -> None:
    """:class:`ModuleError` when ``size`` (what ``what`` takes) is over :data:`MAX_IMAGE_BYTES`."""
    if size > MAX_IMAGE_BYTES:
        raise ModuleError(f"{', '.join(os.fspath(m.path) for m in modules)}: {what} "
                          f"{size:#x} bytes of memory (code, data and .bss); the limit is "
                          f"{MAX_IMAGE_BYTES >> 20} MiB")


def _alloc_bytes(obj: Path) -> int:
    """What an object will take in memory: its SHF_ALLOC sections and common symbols."""
    with open(obj, "rb") as f:
        elf = ELFFile(f)
        total = sum(s["sh_size"] for s in elf.iter_sections() if s["sh_flags"] & 0x2)
        for table in elf.iter_sections():
            if isinstance(table, SymbolTableSection):
                total += sum(sym["st_size"] for sym in table.iter_symbols()
                             if sym["st_shndx"] == "SHN_COMMON")
    return total


def _memory_span(elf_path: Path) -> int:
    """Bytes from the lowest to the end of the highest loaded segment of an image."""
    with open(elf_path, "rb") as f:
        loads = [(s["p_vaddr"], s["p_memsz"]) for s in ELFFile(f).iter_segments()
                 if s["p_type"] == "PT_LOAD"]
    return max(a + n for a, n in loads) - min(a for a, _ in loads) if loads else 0


def _compile_into(arch: Arch, kconf, config: dict[str, str], flags: list[str], work: Path,
                  env: dict[str, str], step: Step, modules: tuple[Module, ...]) -> dict:
    """Compile every object into ``work/obj`` (``autoconf.h`` into ``work/include``):
    what build.json records of them (names in link order, the modules' definitions,
    their warnings, the seconds taken)."""
    include = work / "include"
    kconfig.write_autoconf(kconf, include / "generated" / "autoconf.h")
    objdir = work / "obj"
    objdir.mkdir()
    started = time.perf_counter()
    objs, warnings = _compile_all(arch, flags, config, include, objdir, env, step, modules)
    split = sum(len(m.sources) for m in modules)       # the modules' objects come first
    defined = _module_symbols(arch, config, modules, objs[:split], objs[split:])
    # before the link: an x86_64 kernel's 32-bit relocations fail on a 64 GiB .bss first
    _check_size(modules, "their objects take", sum(map(_alloc_bytes, objs[:split])))
    _apply_relocate(arch, modules, objs[:split])
    return {"objects": [o.name for o in objs], "defined": defined,
            "warnings": warnings, "compile_seconds": round(time.perf_counter() - started, 3)}


def _layout_objects(arch: Arch, kconf, config: dict[str, str], flags: list[str],
                    key: str, cache_dir: Path, env: dict[str, str], step: Step,
                    modules: tuple[Module, ...]) -> tuple[Path, dict]:
    """The objects every layout of one build links: their own cache entry
    (``<key>-objects``, ``key`` the build's without the layout), compiled once, so
    N layouts compile once and link N times. Its directory and build.json."""
    files = ("include/generated/autoconf.h",
             *(f"obj/{name}" for name in _object_names(arch, config, modules)))
    info, _ = cache.entry(cache_dir, f"{key}{OBJECTS}", f"{arch.name}-objects",
                          lambda work: {**_compile_into(arch, kconf, config, flags, work, env,
                                                        step, modules), "key": key + OBJECTS},
                          files)
    return cache_dir / f"{key}{OBJECTS}" / "obj", info


def _build_into(arch: Arch, kconf, config: dict[str, str], flags: list[str],
                work: Path, env: dict[str, str], step: Step,
                modules: tuple[Module, ...] = (), layout: Layout | None = None,
                objects: tuple[Path, dict] | None = None) -> dict:
    """Compile (or take ``objects``: their directory and record) and link into
    ``work``; what build.json records."""
    kconfig.write_config(kconf, work / ".config")
    if objects is None:
        compiled = _compile_into(arch, kconf, config, flags, work, env, step, modules)
        where = work / "obj"
    else:
        kconfig.write_autoconf(kconf, work / "include" / "generated" / "autoconf.h")
        where, compiled = objects
    objdir = work / "obj"
    objdir.mkdir(exist_ok=True)
    objs = [where / name for name in compiled["objects"]]
    split = sum(len(m.sources) for m in modules)
    warnings, defined = compiled["warnings"], compiled["defined"]
    step(f"{arch.name}: linking")
    compiled_at = time.perf_counter()
    script, plan = LINKER_SCRIPT, None
    if layout is not None:             # the same objects, placed as the seed draws
        plan = layout.plan(arch, objs, split)
        script = objdir / "kernel.lds"
        script.write_text(linker_script(plan, LINKER_SCRIPT.read_text()))
    link = functools.partial(_link, arch=arch, env=env, modules=modules, script=script)
    elf = work / ELF_NAME
    sites: list[int] = []
    if config.get("FUNCTION_TRACER") == "y":
        first = work / (ELF_NAME + ".pass1")
        link(objs, first)
        sites = mcount_call_sites(first, arch)
        if not sites:
            raise BuildError(f"{arch.name}: CONFIG_FUNCTION_TRACER=y but the image has "
                             f"no call to any of {', '.join(arch.mcount_symbols)}")
        table = objdir / "mcount_loc.S"
        table.write_text(_mcount_loc_source(arch, sites))
        table_obj = objdir / "mcount_loc.o"
        _run(_zig("cc", "-target", arch.cc_target, *arch.cc_flags, "-c", os.fspath(table),
                  "-o", os.fspath(table_obj)), f"{arch.name}: assembling __mcount_loc", env)
        link(objs + [table_obj], elf)
        if (_alloc_layout(first) != _alloc_layout(elf)
                or _text_bytes(first) != _text_bytes(elf)):
            raise BuildError(f"{arch.name}: adding __mcount_loc moved the image; "
                             "it must stay last in kernel/kernel.lds")
        first.unlink()
    else:
        link(objs, elf)
    shutil.rmtree(objdir)
    return {"compile_seconds": compiled["compile_seconds"] if objects is None else 0.0,
            "link_seconds": round(time.perf_counter() - compiled_at, 3),
            "mcount_sites": len(sites),
            "modules": [{"name": m.name, "path": os.fspath(m.path), "sha256": m.digest,
                         "files": [os.fspath(f.path) for f in m.sources + m.headers], **d}
                        for m, d in zip(modules, defined)],
            "warnings": warnings, "layout": plan}


def build(arch: str, config: str | os.PathLike[str] | None = None, *,
          overrides: Mapping[str, str] | None = None,
          cache_dir: Path | None = None, step: Step | None = None,
          modules: Iterable[str | os.PathLike[str] | Module] = (),
          layout: int | None = None) -> Build:
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
    :class:`ModuleError`, one line). ``layout`` is the seed of a randomized
    text layout (:mod:`kbuild.layout`: compiled with ``-ffunction-sections``,
    functions shuffled and padded); None links as ``kernel/kernel.lds`` says.
    """
    started = time.perf_counter()
    spec = get_arch(arch)
    mods = load_modules(modules)
    kconf = _load(spec.name, config, overrides)
    values = kconfig.enabled(kconf)
    spec = spec.for_config(values)               # e.g. ARM's THUMB2_KERNEL
    drawn = None if layout is None else Layout(layout)
    flags = compile_flags(spec, values) + (list(FUNCTION_SECTIONS) if drawn else [])
    config_text = kconfig.config_hash_text(kconf)
    key = cache_key(spec, config_text, flags, mods, drawn)
    cache_dir = Path(cache_dir).resolve() if cache_dir is not None else default_cache_dir()
    final = cache_dir / key

    def make(work: Path) -> dict:
        env, say = _zig_env(cache_dir), step or (lambda _: None)
        objects = None if drawn is None else _layout_objects(
            spec, kconf, values, flags, cache_key(spec, config_text, flags, mods), cache_dir,
            env, say, mods)
        built = _build_into(spec, kconf, values, flags, work, env, say, mods, drawn, objects)
        built.update(arch=spec.name, key=key, compiler=compiler_version(),
                     cflags=flags, ldflags=list(LDFLAGS), config=values,
                     built_seconds=round(time.perf_counter() - started, 3))
        return built
    info, cached = cache.entry(cache_dir, key, spec.name, make)
    warnings = tuple(info.get("warnings", ()))
    report_warnings(warnings)
    return Build(arch=spec.name, elf=final / ELF_NAME, config=values, key=key,
                 cached=cached, seconds=time.perf_counter() - started,
                 mcount_sites=info.get("mcount_sites", 0), info=info, modules=mods,
                 warnings=warnings, layout=layout)


#: Every module warning the builds of this process reported, in order (a dict as an
#: ordered set): what a command's ``--json`` carries as ``"warnings"``.
_REPORTED: dict[str, None] = {}


def report_warnings(warnings: Sequence[str]) -> None:
    """Print a build's module warnings on stderr and keep them for ``--json``; a
    cached build reports them again, as its compile did."""
    for line in warnings:
        print(line, file=sys.stderr)
    _REPORTED.update(dict.fromkeys(warnings))


def reported_warnings() -> list[str]:
    """The module warnings of every build made or reused since :func:`forget_warnings`,
    once each."""
    return list(_REPORTED)


def forget_warnings() -> None:
    """Start a new command: the warnings reported so far belong to the last one."""
    _REPORTED.clear()


__all__ = ["Build", "BuildError", "Module", "ModuleError", "build", "cache_key", "compiler_version",
           "default_cache_dir", "forget_warnings", "mcount_call_sites", "report_warnings",
           "reported_warnings"]

"""Guest modules: C files compiled against the kernel's headers and linked in.

A module is one C file, a directory (every ``*.c`` in it, one translation
unit each, as ``obj-m := name.o`` / ``name-y := a.o b.o`` would build it
with ``make M=DIR``) or a comma-separated list of C files. Sources and
local headers are read with :func:`fsio.read_regular` (regular files only,
size-limited). Its name (``KBUILD_MODNAME``) is the file's stem, the
directory's name, or the first file's stem, each ``-`` made ``_`` as
kbuild's ``name-fix`` does (scripts/Makefile.lib: ``crc-ccitt.c`` is
module ``crc_ccitt``): a C identifier, unique in one build. It is compiled as a kernel module would be (v5.10 kbuild: the
kernel's flags, ``-DMODULE`` and ``-DKBUILD_MODNAME``, warnings reported
and not fatal unless ``werror``) and linked into the image, so that its
functions are kernel text like any other: probed, traced and counted the
same way.

The compiler reads copies of the bytes that went into the build's cache
key: each source prefixed by a ``#line`` directive naming the user's file,
and the local headers (every ``*.h`` in the module's directory, and below
it for a directory module) beside them, with ``-I`` that copy of the
directory. A failed compile or link is a :class:`ModuleError` whose message
is the first error, on one line, naming the user's files.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import fsio
from kbuild.errors import ModuleError
from kbuild.tools import check_tool_path

#: Largest module source read (a module's C file is written by hand).
MODULE_LIMIT = 1 << 20
#: Largest local header read (generated tables such as crc32table.h are bigger).
HEADER_LIMIT = 4 << 20
#: Most source and header files in one module.
MAX_FILES = 256
_NAME = re.compile(r"[A-Za-z_]\w*\Z")
_DIAG = re.compile(r"^(?P<where>[^\s:][^:]*:\d+:\d+): (?:fatal )?error: (?P<what>.*)$", re.M)
_WARNING = re.compile(r"^[^\s:][^:]*:\d+:\d+: warning: .*$", re.M)
_LD_ERROR = re.compile(r"^ld\.lld: error: (?P<what>.*)$", re.M)
_LD_WHERE = re.compile(r"^>>> (?:referenced by|defined at) (?P<where>\S+)", re.M)
#: Flags the kernel's build treats differently for modules: warnings are
#: reported, not fatal (the top Makefile adds -Werror only with CONFIG_WERROR, v5.15+).
NOT_FOR_MODULES = ("-Werror", "-Wextra")


class ModulePath(str):
    """A ``--module`` argument: the path, and whether the module's warnings are
    errors (``--module-werror``); a plain ``str`` where a path is expected."""

    werror: bool = False

    def __new__(cls, path: str, werror: bool = False) -> "ModulePath":
        obj = super().__new__(cls, path)
        obj.werror = werror
        return obj


@dataclass(frozen=True)
class ModuleFile:
    """One file of a module: the user's path, its path in the module's directory, its bytes."""

    path: Path
    rel: str
    data: bytes


@dataclass(frozen=True)
class Module:
    """One guest module: its name, what the user named, its sources and local headers."""

    name: str
    path: Path                        # the FILE.c, DIR or first file the user gave
    root: Path                        # the directory -I names (local headers live here)
    sources: tuple[ModuleFile, ...]   # compiled one by one
    headers: tuple[ModuleFile, ...] = ()
    werror: bool = False

    @property
    def digest(self) -> str:
        """SHA-256 over every file (path in the module and bytes) and the werror choice."""
        h = hashlib.sha256(f"werror={self.werror}\0".encode())
        for f in self.sources + self.headers:
            h.update(f"{f.rel}\0{len(f.data)}\0".encode())
            h.update(f.data)
        return h.hexdigest()

    def compiled_text(self, source: ModuleFile) -> bytes:
        """What the compiler reads for ``source``: a #line directive naming the
        user's file, then the source."""
        quoted = os.fsencode(source.path).replace(b"\\", b"\\\\").replace(b'"', b'\\"')
        return b'#line 1 "' + quoted + b'"\n' + source.data     # a path need not be UTF-8

    def write_tree(self, where: Path) -> list[tuple[Path, ModuleFile]]:
        """Write the files the compiler reads under ``where`` (the copy of
        :attr:`root`); return each source's copy and the source."""
        out = []
        for f in self.headers:
            dest = where / f.rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(f.data)
        for f in self.sources:
            dest = where / f.rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(self.compiled_text(f))
            out.append((dest, f))
        return out


def _read(path: Path, root: Path, limit: int, what: str) -> ModuleFile:
    return ModuleFile(path=path, rel=path.relative_to(root).as_posix(),
                      data=fsio.read_regular(path, limit=limit, what=what))


def _headers(root: Path, recursive: bool) -> tuple[ModuleFile, ...]:
    """The local headers: regular ``*.h`` files of ``root`` (and below it when
    ``recursive``); links, FIFOs and devices are left out, never opened."""
    found = sorted(root.rglob("*.h") if recursive else root.glob("*.h"))
    regular = [p for p in found if p.is_file() and not p.is_symlink()]
    if len(regular) > MAX_FILES:
        raise ModuleError(f"{root}: {len(regular)} headers; a module has at most {MAX_FILES}")
    return tuple(_read(p, root, HEADER_LIMIT, "module header") for p in regular)


def _resolve(path: Path) -> Path:
    """``path`` made absolute with its links followed; a link loop is a :class:`ModuleError`."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):       # ELOOP: RuntimeError before Python 3.13, then OSError
        raise ModuleError(f"{path}: a symbolic link loop") from None


#: What ``--module`` names, for the errors that say it was something else.
_FORMS = "a module is a C file (FILE.c), a directory of them, or a comma-separated list"


def _check_c(path: Path) -> None:
    if path.suffix != ".c":
        raise ModuleError(f"{path}: {_FORMS} of C files")


def modname(stem: str) -> str:
    """``KBUILD_MODNAME`` of a file or directory named ``stem``: each ``-`` made
    ``_`` (scripts/Makefile.lib ``name-fix``, which ``modname_flags`` applies)."""
    return stem.replace("-", "_")


def load_module(path: str | os.PathLike[str], werror: bool | None = None) -> Module:
    """Read one module (FILE.c, DIR, or ``a.c,b.c``); :class:`ModuleError` /
    :class:`fsio.UnsafePath` when unusable. ``werror`` defaults to the
    :class:`ModulePath`'s own."""
    if werror is None:
        werror = getattr(path, "werror", False)
    text = os.fspath(path)
    if not all(text.split(",")):
        raise ModuleError(f"{text!r}: an empty name; {_FORMS} of C files")
    if "," in text:
        files = [_resolve(Path(p)) for p in text.split(",")]
        for f in files:
            _check_c(f)
        name, root, recursive = files[0].stem, files[0].parent, False
    elif Path(text).is_dir():
        root = _resolve(Path(text))
        found = sorted(root.glob("*.c"))
        files = [p for p in found if _resolve(p).is_file()]       # a looping link: an error
        if not files:
            raise ModuleError(f"{text}: a module directory holds at least one C file")
        name, recursive = root.name, True
    else:
        _check_c(Path(text))
        files = [_resolve(Path(text))]
        if files[0].suffix != ".c":     # the compiler takes a file by its (target's) name
            raise ModuleError(f"{text}: a link to {files[0]}, which is not a C file (FILE.c)")
        name, root, recursive = files[0].stem, files[0].parent, False
    name = modname(name)
    if not _NAME.match(name):
        raise ModuleError(f"{text}: the module name {name!r} (the "
                          f"{'directory' if recursive else 'file'}'s stem, '-' read as '_') "
                          "is not a C identifier")
    if len(files) > MAX_FILES or len(set(files)) != len(files):
        raise ModuleError(f"{text}: a module's C files must be distinct, at most {MAX_FILES}")
    outside = [f for f in files if not f.is_relative_to(root)]
    if outside:
        raise ModuleError(f"{outside[0]}: a module's C files are in one directory, {root}")
    sources = tuple(_read(f, root, MODULE_LIMIT, "module source") for f in files)
    headers = _headers(root, recursive)
    for f in sources + headers:           # before anything is built
        check_tool_path(f.path, "module file", ModuleError)
    return Module(name=name, path=files[0] if len(files) == 1 else Path(text),
                  root=root, sources=sources, headers=headers, werror=werror)


def load_modules(paths: Iterable[str | os.PathLike[str] | Module]) -> tuple[Module, ...]:
    """:func:`load_module` of each (a :class:`Module` passes through); names must differ."""
    modules = tuple(p if isinstance(p, Module) else load_module(p) for p in paths)
    seen: dict[str, Path] = {}
    for module in modules:
        if module.name in seen:
            raise ModuleError(f"two modules named {module.name!r}: {seen[module.name]} and "
                              f"{module.path}")
        seen[module.name] = module.path
    return modules


def module_flags(flags: Sequence[str], module: Module) -> list[str]:
    """The kernel's compile flags adjusted for a module (see :data:`NOT_FOR_MODULES`)."""
    return [f for f in flags if f not in NOT_FOR_MODULES] + [
        "-DMODULE", f"-DKBUILD_MODNAME=\"{module.name}\""] + (["-Werror"] if module.werror else [])


def warnings_of(diagnostics: str) -> list[str]:
    """The compiler's warnings, one line each (``file:line:col: warning: ...``)."""
    return [m.group(0).strip() for m in _WARNING.finditer(diagnostics)]


def first_error(diagnostics: str, where: object) -> str:
    """The compiler's (or linker's) first error as ``file:line:col: message``
    (``where``: the file to name when the tool names none)."""
    found = _DIAG.search(diagnostics)
    if found:
        return f"{found['where']}: error: {found['what'].strip()}"
    found = _LD_ERROR.search(diagnostics)
    if found:
        ref = _LD_WHERE.search(diagnostics, found.end())
        return (f"{where}: {found['what'].strip()}"
                + (f" (referenced by {ref['where']})" if ref else ""))
    lines = [line for line in diagnostics.splitlines() if line.strip()]
    return f"{where}: {lines[0].strip() if lines else 'the build failed'}"


__all__ = ["HEADER_LIMIT", "MODULE_LIMIT", "Module", "ModuleError", "ModuleFile", "ModulePath",
           "first_error", "load_module", "load_modules", "modname", "module_flags", "warnings_of"]

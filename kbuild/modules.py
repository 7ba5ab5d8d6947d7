"""Guest modules: C files compiled against the kernel's headers and linked in.

A module is one C file, read with :func:`fsio.read_text` (regular files
only, size-limited). Its name is the file's stem (``KBUILD_MODNAME``), a C
identifier, unique in one build. It is compiled as a kernel module would be
(v5.10 kbuild: the kernel's flags, ``-DMODULE`` and ``-DKBUILD_MODNAME``,
warnings not fatal) and linked into the image, so that its functions are
kernel text like any other: probed, traced and counted the same way.

The compiler reads a copy of the bytes that went into the build's cache
key, prefixed by a ``#line`` directive naming the user's file, so that a
diagnostic names that file and line. A failed compile or link is a
:class:`ModuleError` whose message is the first error, on one line.
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

#: Largest module source read (a module is one hand-written C file).
MODULE_LIMIT = 1 << 20
_NAME = re.compile(r"[A-Za-z_]\w*\Z")
_DIAG = re.compile(r"^(?P<where>[^\s:][^:]*:\d+:\d+): (?:fatal )?error: (?P<what>.*)$", re.M)
_LD_ERROR = re.compile(r"^ld\.lld: error: (?P<what>.*)$", re.M)
_LD_WHERE = re.compile(r"^>>> (?:referenced by|defined at) (?P<where>\S+)", re.M)
#: Flags the kernel's build treats differently for modules: warnings are
#: reported, not fatal (the top Makefile adds -Werror only with CONFIG_WERROR, v5.15+).
NOT_FOR_MODULES = ("-Werror", "-Wextra")


@dataclass(frozen=True)
class Module:
    """One guest module: its name, where it came from and its source text."""

    name: str
    path: Path
    source: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()

    def compiled_text(self) -> str:
        """What the compiler reads: a #line directive naming the user's file, then the source."""
        quoted = os.fspath(self.path).replace("\\", "\\\\").replace('"', '\\"')
        return f'#line 1 "{quoted}"\n{self.source}'


def load_module(path: str | os.PathLike[str]) -> Module:
    """Read one module source; :class:`ModuleError` / :class:`fsio.UnsafePath` when unusable."""
    path = Path(path)
    if path.suffix != ".c":
        raise ModuleError(f"{path}: a module is a C file (FILE.c)")
    name = path.stem
    if not _NAME.match(name):
        raise ModuleError(f"{path}: the module name {name!r} (the file's stem) is not a "
                          "C identifier")
    source = fsio.read_text(path, limit=MODULE_LIMIT, what="module source")
    return Module(name=name, path=path.resolve(), source=source)


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
        "-DMODULE", f"-DKBUILD_MODNAME=\"{module.name}\""]


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


__all__ = ["MODULE_LIMIT", "Module", "ModuleError", "first_error", "load_module",
           "load_modules", "module_flags"]

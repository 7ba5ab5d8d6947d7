"""Kconfig for kisim guests, through kconfiglib.

A thin wrapper in the Zephyr pattern (scripts/kconfig/kconfig.py): parse
with kconfiglib, treat every warning as an error, and after loading a
configuration check that each assignment took. The menus are real Kconfig:
``arches/<arch>/Kconfig`` is the top-level file (like ``arch/$ARCH/Kconfig``)
and ``source``s the generic files in this directory by
``$(srctree)``-relative paths, with ``srctree`` the repository root.

Every arch's ``defconfig`` enables every instrumentation feature its
capabilities allow (SMP, MARKERS, IMMEDIATE, TRACEPOINTS, JUMP_LABEL,
KPROBES with KRETPROBES and, where HAVE_OPTPROBES, OPTPROBES,
FUNCTION_TRACER with DYNAMIC_FTRACE, KMEMTRACE): a simulator exists to
measure these mechanisms, so the default build carries all of them, dormant
until armed. Each file is in ``savedefconfig`` form, so ``kisim
savedefconfig`` reproduces it byte for byte.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import tempfile
from pathlib import Path
from typing import Callable, Iterator

import kconfiglib
from kconfiglib import AND, BOOL, TRI_TO_STR, TRISTATE, expr_str, expr_value, split_expr

import fsio
from arches import get_arch

#: ``$(srctree)``: the repository root, the parent of this package.
SRCTREE = Path(__file__).resolve().parent.parent
#: Bytes of a configuration file read: a kisim .config is about 2 KiB, and
#: Linux's allyesconfig for x86_64 about 300 KiB.
MAX_CONFIG_BYTES = 1 << 20


class KconfigError(Exception):
    """A Kconfig or .config problem, as one user-facing line."""


__all__ = ["KconfigError", "SRCTREE", "config_hash_text", "defconfig", "enabled",
           "kconfig_path", "defconfig_path", "load", "load_config", "menuconfig", "olddefconfig",
           "parse", "savedefconfig", "set_values", "write_autoconf", "write_config"]


def kconfig_path(arch: str) -> Path:
    """``arches/<arch>/Kconfig``, relative to :data:`SRCTREE` (arch validated)."""
    return Path("arches") / get_arch(arch).name / "Kconfig"


def defconfig_path(arch: str) -> Path:
    """``arches/<arch>/defconfig``, absolute (arch validated)."""
    return SRCTREE / "arches" / get_arch(arch).name / "defconfig"


@contextlib.contextmanager
def _environ(**values: str) -> Iterator[None]:
    """Set environment variables for the duration of a kconfiglib call.

    kconfiglib reads ``srctree`` and ``KCONFIG_WARN_UNDEF`` from the
    environment when a :class:`kconfiglib.Kconfig` is created.
    """
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old


def _one_line(message: str) -> str:
    """Squeeze a kconfiglib message onto one line.

    An undefined-symbol warning lists each reference and the whole
    referencing node: keep ``file:line:`` of the first reference in front.
    """
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    refs = [line.removeprefix("- Referenced at ").rstrip(":")
            for line in lines if line.startswith("- Referenced at ")]
    if refs:
        return f"{refs[0]}: {lines[0].rstrip(':')}"
    return " ".join(lines) or message


def _raise_warnings(kconf: kconfiglib.Kconfig) -> None:
    """Warnings are errors: raise the first one (each carries file:line when known)."""
    if kconf.warnings:
        more = len(kconf.warnings) - 1
        message = _one_line(kconf.warnings[0]).replace("warning: ", "", 1)
        # In a strict load nothing is ignored: drop kconfiglib's "ignored" wording.
        message = message.replace(". Assignment ignored.", "").replace("ignoring malformed", "malformed")
        raise KconfigError(message + (f" (and {more} more)" if more else ""))


def parse(top: str | os.PathLike[str], srctree: str | os.PathLike[str] = SRCTREE) -> kconfiglib.Kconfig:
    """Parse a top-level Kconfig file strictly.

    ``top`` is relative to ``srctree`` (or absolute); ``srctree`` is what
    ``$(srctree)`` expands to. Syntax errors come out as ``file:line:
    message``; any warning, including references to undefined symbols
    (``KCONFIG_WARN_UNDEF=y``), is an error.
    """
    with _environ(srctree=os.fspath(srctree), KCONFIG_WARN_UNDEF="y"):
        try:
            kconf = kconfiglib.Kconfig(os.fspath(top), warn_to_stderr=False)
        except kconfiglib.KconfigError as err:
            raise KconfigError(_one_line(str(err))) from None
        except OSError as err:      # kconfiglib's own IOErrors carry a hint in .msg
            text = getattr(err, "msg", None) or f"{err.filename}: {err.strerror}"
            raise KconfigError(_one_line(text)) from None
    _raise_warnings(kconf)
    # Assignments to symbols that do not exist are typos, not old configs.
    kconf.warn_assign_undef = True
    return kconf


def load(arch: str) -> kconfiglib.Kconfig:
    """Parse ``arches/<arch>/Kconfig``; symbols hold their default values."""
    return parse(kconfig_path(arch))


def _assignment_lines(path: str | os.PathLike[str]) -> dict[str, int]:
    """Symbol name -> line of its (last) assignment in a .config file."""
    pattern = re.compile(r"^(?:CONFIG_(\w+)=|# CONFIG_(\w+) is not set)")
    lines: dict[str, int] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            match = pattern.match(line)
            if match:
                lines[match.group(1) or match.group(2)] = number
    return lines


def _user_str(sym: kconfiglib.Symbol) -> str:
    if sym.orig_type in (BOOL, TRISTATE):
        return TRI_TO_STR[sym.user_value]
    return str(sym.user_value)


def _unmet(expr: object) -> list[str]:
    """The conjuncts of ``expr`` that are false, as ``NAME (=value)``."""
    def show(sc: object) -> str:
        name = expr_str(sc)
        return name if getattr(sc, "is_constant", True) else f"{name} (={sc.str_value})"  # type: ignore[attr-defined]
    return [expr_str(term, show) for term in split_expr(expr, AND) if not expr_value(term)]


def _why(sym: kconfiglib.Symbol) -> str:
    """Why a symbol's value differs from the value assigned to it."""
    if sym.orig_type in (BOOL, TRISTATE) and expr_value(sym.rev_dep) > sym.user_value:
        return f"it is selected by {expr_str(sym.rev_dep)}"
    if not any(node.prompt for node in sym.nodes):
        return "it has no prompt: its value comes from the Kconfig (select, default), not a .config"
    if not sym.visibility:
        deps = _unmet(sym.direct_dep)
        for node in sym.nodes:
            if node.prompt:
                deps += [d for d in _unmet(node.prompt[1]) if d not in deps]
        if deps:
            return "unmet dependency " + " && ".join(deps)
        return f"it is not visible (depends on {expr_str(sym.direct_dep)})"
    for low, high, cond in sym.ranges:
        if expr_value(cond):
            return f"outside its range {low.str_value}..{high.str_value}"
    return "kconfiglib rejected the value"


def _untaken(kconf: kconfiglib.Kconfig, path: str | os.PathLike[str]) -> list[str]:
    """Each assignment in ``path`` that did not take, and why (Zephyr's
    check_assigned_sym_values), as ``FILE:LINE: CONFIG_X=v did not take ...``."""
    where = _assignment_lines(path)
    problems = []
    for sym in kconf.unique_defined_syms:
        if sym.user_value is None or sym.choice:
            continue
        wanted = _user_str(sym)
        if wanted != sym.str_value:
            problems.append(f"{os.fspath(path)}:{where.get(sym.name, '?')}: "
                            f"CONFIG_{sym.name}={wanted} did not take "
                            f"(value is {sym.str_value}): {_why(sym)}")
    return problems


def _load_into(kconf: kconfiglib.Kconfig, path: str | os.PathLike[str]) -> kconfiglib.Kconfig:
    """Load a .config/defconfig into ``kconf`` strictly: a malformed line, an unknown
    symbol or an assignment that does not take is an error."""
    _read_into(kconf, path)
    problems = _untaken(kconf, path)
    if problems:
        raise KconfigError("; ".join(problems) + " ('kisim olddefconfig' gives each the "
                           "value its Kconfig allows, as make olddefconfig does)")
    return kconf


def _read_into(kconf: kconfiglib.Kconfig, path: str | os.PathLike[str]) -> None:
    """Read ``path`` into ``kconf``; a malformed line or an unknown symbol is an error."""
    if not Path(path).exists():
        raise KconfigError(f"{os.fspath(path)}: no such configuration file")
    if not Path(path).is_file():        # a FIFO or device would block or never end
        raise KconfigError(f"{os.fspath(path)}: not a regular file; a configuration is read "
                           "only from a regular file")
    size = Path(path).stat().st_size
    if size > MAX_CONFIG_BYTES:
        raise KconfigError(f"{os.fspath(path)}: a configuration of {size:,} bytes, over the "
                           f"{MAX_CONFIG_BYTES:,}-byte limit")
    kconf.warnings.clear()
    try:
        kconf.load_config(os.fspath(path))
    except kconfiglib.KconfigError:     # load_config raises it only for bad UTF-8
        raise KconfigError(f"{os.fspath(path)}: not a configuration file (not UTF-8 text)") from None
    except OSError as err:
        raise KconfigError(f"{os.fspath(path)}: {err.strerror or err}") from None
    _raise_warnings(kconf)


def set_values(kconf: kconfiglib.Kconfig, values: dict[str, str], arch: str) -> None:
    """Set ``NAME -> value`` (``--set``) on ``kconf``; :class:`KconfigError` naming why
    a value did not take (unmet dependency, select, range), as for a .config line."""
    invalid: dict[str, str] = {}
    for name, value in values.items():
        sym = kconf.syms.get(name)
        if sym is None or not sym.nodes:
            raise KconfigError(f"CONFIG_{name}: no such symbol in the {arch} Kconfig")
        if not sym.set_value(value):            # not a value of the symbol's type at all
            invalid[name] = f"not a valid {kconfiglib.TYPE_TO_STR[sym.orig_type]} value" + (
                " (y or n)" if sym.orig_type is BOOL else "")
    problems = [f"--set {name}={value} did not take (value is {kconf.syms[name].str_value}): "
                f"{invalid.get(name) or _why(kconf.syms[name])}"
                for name, value in values.items() if kconf.syms[name].str_value != value]
    if problems:
        raise KconfigError("; ".join(problems))


def defconfig(arch: str) -> kconfiglib.Kconfig:
    """The arch's Kconfig loaded with ``arches/<arch>/defconfig``."""
    return _load_into(load(arch), defconfig_path(arch))


def load_config(arch: str, path: str | os.PathLike[str]) -> kconfiglib.Kconfig:
    """The arch's Kconfig loaded with the .config at ``path`` (strict)."""
    return _load_into(load(arch), path)


def olddefconfig(arch: str, path: str | os.PathLike[str]) -> list[str]:
    """``make olddefconfig`` (conf --olddefconfig): load ``path``, give new symbols
    their defaults, and rewrite it. An assignment that cannot take (an unmet
    dependency, a select, a range) gets the value the Kconfig gives it, as conf
    does; the strict loads of every other command refuse one. Returns those
    assignments, one line each, for the caller to report."""
    kconf = load(arch)
    _read_into(kconf, path)
    changed = _untaken(kconf, path)
    write_config(kconf, path)
    return changed


@contextlib.contextmanager
def _output(path: str | os.PathLike[str]) -> Iterator[Path]:
    """``fsio``'s checked output path; its refusals and the OS's errors as KconfigError."""
    try:
        yield fsio.check_output(path)
    except fsio.UnsafePath as err:
        raise KconfigError(str(err)) from None
    except OSError as err:
        raise KconfigError(f"{os.fspath(path)}: {err.strerror or err}") from None


def _install(source: str, target: Path, backup: bool) -> None:
    """Rename the written file ``source`` over ``target``; with ``backup``, a
    ``target`` that exists is first copied to ``target.old``, as kconfiglib's
    ``write_config`` does for ``.config`` (the copy written like any output:
    a link or device at ``target.old`` is refused, never followed)."""
    if backup and target.exists():
        fsio.atomic_write(f"{target}.old", fsio.read_regular(target, what="configuration"))
    with fsio.atomic_open(target, "wb") as f:
        f.write(fsio.read_regular(source, what="configuration"))


def _write(path: str | os.PathLike[str], writer: Callable[[str, str], object], header: str,
           backup: bool = False) -> None:
    """Write through ``writer`` (a kconfiglib method, which writes to a file
    name) into a temporary directory, then install it at ``path`` (_install()).

    Only regular files are written: a device, FIFO, directory or symlink at
    ``path`` or at ``path.old`` is refused before anything is touched, and a
    crash leaves the old file whole (the rename is atomic).
    """
    with _output(path) as target:
        if backup:
            fsio.check_output(f"{target}.old")
        with tempfile.TemporaryDirectory(prefix="kisim-kconfig-") as tmp:
            written = os.path.join(tmp, target.name)
            writer(written, header)
            target.parent.mkdir(parents=True, exist_ok=True)
            _install(written, target, backup)


def _same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    return Path(a).exists() and Path(b).exists() and os.path.samefile(a, b)


def write_config(kconf: kconfiglib.Kconfig, path: str | os.PathLike[str]) -> None:
    """Write a full .config, with the kernel's "DO NOT EDIT" header; the old one
    is kept as ``.config.old``. (kconfiglib's own method, which menuconfig()
    replaces on its instance.)"""
    header = f"#\n# Automatically generated file; DO NOT EDIT.\n# {kconf.mainmenu_text}\n#\n"
    _write(path, lambda name, text: kconfiglib.Kconfig.write_config(kconf, name, text,
                                                                    save_old=False),
           header, backup=True)


def savedefconfig(kconf: kconfiglib.Kconfig, path: str | os.PathLike[str],
                  source: str | os.PathLike[str] | None = None) -> None:
    """Write the minimal config (``make savedefconfig``): only non-default values.

    Refuses to write over ``source``, the full configuration it came from:
    replacing a .config with its minimal form would silently lose it.
    """
    if source is not None and _same_file(path, source):
        raise KconfigError(f"{os.fspath(path)}: is the configuration being read; "
                           "write the minimal config to another file")
    _write(path, lambda name, text: kconfiglib.Kconfig.write_min_config(kconf, name, text), "")


def write_autoconf(kconf: kconfiglib.Kconfig, path: str | os.PathLike[str]) -> None:
    """Write ``include/generated/autoconf.h``: ``#define CONFIG_X 1`` for each y."""
    header = f"/*\n * Automatically generated file; DO NOT EDIT.\n * {kconf.mainmenu_text}\n */\n"
    _write(path, kconf.write_autoconf, header)


def menuconfig(arch: str, path: str | os.PathLike[str]) -> None:
    """Run kconfiglib's curses menuconfig on the .config at ``path``.

    A missing file starts from the arch defconfig, as ``make menuconfig``
    starts from ``arch/$ARCH/defconfig``; an existing one is first loaded
    strictly. kconfiglib's menuconfig loads the file named by
    ``KCONFIG_CONFIG``; it saves through write_config(), as every output is
    written (a temporary file renamed over the target, the old one kept as
    ``.config.old``), where on its own it would truncate the file in place.
    Needs a terminal: the caller checks for a TTY.
    """
    import curses

    import menuconfig as kconfiglib_menuconfig  # kconfiglib's menuconfig.py
    with _output(path) as target:
        fsio.check_output(f"{target}.old")
    created = None                  # the defconfig written for a new file, until saved over
    if target.exists():
        kconf = load_config(arch, target)
    else:
        kconf = defconfig(arch)
        write_config(kconf, target)
        created = target.read_bytes()

    def saved(what: str, filename: str, write: Callable[[], None]) -> str:
        """A save from its menus, written as every other output is (_write());
        an error as the OSError its dialog reports."""
        try:
            write()
        except KconfigError as err:
            raise OSError(errno.EINVAL, str(err), filename) from None
        return f"{what} saved to '{filename}'"

    class Saving(kconfiglib.Kconfig):
        """The loaded configuration, whose Save, Save as and minimal save (all
        menuconfig.py writes) go through write_config() and savedefconfig()."""
        __slots__ = ()

        def write_config(self, filename: str, *_: object, **__: object) -> str:
            return saved("Configuration", filename, lambda: write_config(self, filename))

        def write_min_config(self, filename: str, *_: object, **__: object) -> str:
            return saved("Minimal configuration", filename,
                         lambda: savedefconfig(self, filename, target))

    kconf.__class__ = Saving
    with _environ(KCONFIG_CONFIG=os.fspath(target)):
        try:
            kconfiglib_menuconfig.menuconfig(kconf)
        except curses.error as err:
            if created is not None and target.read_bytes() == created:
                target.unlink()     # a file of the user's name they never saw
            raise KconfigError(f"menuconfig: terminal error: {err} (is TERM set?)") from None


def enabled(kconf: kconfiglib.Kconfig) -> dict[str, str]:
    """Every symbol's value by name: ``"y"``/``"n"`` for bools, the number for ints."""
    return {sym.name: sym.str_value for sym in sorted(kconf.unique_defined_syms, key=lambda s: s.name)
            if sym.orig_type != kconfiglib.UNKNOWN}


def config_hash_text(kconf: kconfiglib.Kconfig) -> str:
    """Canonical text of a configuration: sorted ``CONFIG_X=value`` lines.

    Independent of file order, comments and menu layout, so two configs
    with the same values have the same text (a build cache key). The arch
    is part of it through its arch symbols (X86_64, ARM, PPC32).
    """
    return "".join(f"CONFIG_{name}={value}\n" for name, value in enabled(kconf).items())

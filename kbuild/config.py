"""Which .config a build uses: ``--config``, else ``./.config``, else defconfig.

As ``make`` does, a build with no explicit configuration uses ``.config``
in the current directory when there is one (``kisim defconfig``,
``menuconfig`` and ``olddefconfig`` write it there). A full ``.config``
names its arch in the header kconfiglib writes (``# <mainmenu text>``,
the ``mainmenu`` line of ``arches/<arch>/Kconfig``); one written for
another arch is refused rather than half-applied.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import kconfig
from arches import ARCHES, get_arch

DOT_CONFIG = Path(".config")
_MAINMENU = re.compile(r'^mainmenu\s+"(.*)"\s*$', re.M)


class ConfigChoiceError(kconfig.KconfigError):
    """A ``./.config`` that cannot be used for the requested arch (a usage error)."""


@dataclass(frozen=True)
class ConfigChoice:
    """The configuration a command builds from and why."""

    path: Path | None        # None: the arch's defconfig
    source: str              # "--config", "./.config" or "defconfig"

    def describe(self) -> str:
        """One line for stderr: which configuration was used."""
        if self.path is None:
            return "kisim: using the defconfig (no --config and no ./.config)"
        return f"kisim: using {self.path} ({self.source})"

    def to_json(self) -> dict:
        return {"path": os.fspath(self.path) if self.path else None, "source": self.source}


def mainmenu(arch: str) -> str | None:
    """The ``mainmenu`` text of ``arches/<arch>/Kconfig``."""
    text = (kconfig.SRCTREE / kconfig.kconfig_path(arch)).read_text()
    found = _MAINMENU.search(text)
    return found.group(1) if found else None


def config_arch(path: Path) -> str | None:
    """The arch a .config's header names, or None if it names none we know."""
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            head = [f.readline().strip() for _ in range(4)]
    except OSError:
        return None
    for name in ARCHES:
        menu = mainmenu(name)
        if menu and f"# {menu}" in head:
            return name
    return None


def resolve_config(arch: str, config: str | os.PathLike[str] | None) -> ConfigChoice:
    """The configuration to build ``arch`` from.

    ``config`` (a --config argument) wins; else ``./.config`` if it exists;
    else the defconfig. Raises :class:`ConfigChoiceError` (one line) when
    ``./.config`` is for another arch, or is there but not a regular file
    (a directory, a FIFO, a device, a link to nothing), which is not taken
    silently for no ``.config``.
    """
    name = get_arch(arch).name
    if config is not None:
        return ConfigChoice(Path(config), "--config")
    if not os.path.lexists(DOT_CONFIG):
        return ConfigChoice(None, "defconfig")
    if not DOT_CONFIG.is_file():
        raise ConfigChoiceError("./.config is not a regular file: remove it, or pass "
                                "--config FILE")
    other = config_arch(DOT_CONFIG)
    if other is not None and other != name:
        raise ConfigChoiceError(f"./.config is for {other}, not {name}: pass --config FILE, "
                                f"or run `kisim defconfig --arch {name}`")
    return ConfigChoice(DOT_CONFIG.resolve(), "./.config")

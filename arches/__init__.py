"""The architecture registry.

Each arch is one package under ``arches/`` whose ``__init__`` declares an
``ARCH`` (see :mod:`arches.base`); its guest entry code and Kconfig menu sit
beside it. Adding an arch means adding one such package: the registry finds
every subpackage that declares ``ARCH``.
"""
from __future__ import annotations

import importlib
import pkgutil

from arches.base import Arch, Cost, EncodingError, TrapKind, TrapVector


class UnknownArch(ValueError):
    """An arch name not in the registry."""


def _load() -> dict[str, Arch]:
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if info.ispkg and hasattr(module, "ARCH"):
            found[module.ARCH.name] = module.ARCH
    return dict(sorted(found.items()))


ARCHES: dict[str, Arch] = _load()
NAMES: tuple[str, ...] = tuple(ARCHES)


def get_arch(name: str) -> Arch:
    """The arch called ``name``, or :class:`UnknownArch` listing the valid ones."""
    try:
        return ARCHES[name]
    except KeyError:
        raise UnknownArch(f"unknown arch {name!r} (known: {', '.join(NAMES)})") from None


__all__ = ["ARCHES", "Arch", "Cost", "EncodingError", "NAMES", "TrapKind",
           "TrapVector", "UnknownArch", "get_arch"]

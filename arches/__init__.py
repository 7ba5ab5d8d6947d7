"""The architecture registry.

Each arch is one package under ``arches/`` whose ``__init__`` declares an
``ARCH`` (see :mod:`arches.base`) with its typed hooks in ``ARCH.ops``; its
guest entry code and Kconfig menu sit beside it. Adding an arch means adding
one such package: :func:`discover` finds every subpackage that declares
``ARCH`` and :func:`check_arch` refuses, at import, one whose declaration or
hooks are incomplete, with one line naming the arch and what is wrong.
"""
from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Iterable

from arches.base import (CAPABILITIES, OPTIONAL_CAPABILITIES, Arch, ArchDefinitionError,
                         ArchOps, Cost, EncodingError, TrapKind, TrapVector, check_ops)


class UnknownArch(ValueError):
    """An arch name not in the registry."""


def check_arch(module: ModuleType) -> Arch:
    """The ``ARCH`` that ``module`` declares, checked (ArchDefinitionError if not)."""
    arch = getattr(module, "ARCH", None)
    if not isinstance(arch, Arch):
        raise ArchDefinitionError(f"arch package {module.__name__}: ARCH is "
                                  f"{type(arch).__name__}, not arches.base.Arch")
    for each in (arch, *arch.variants.values()):
        label = f"{each.name}{' ' + each.variant if each.variant else ''}"
        check_ops(label, each.ops)
        if each.cmodx_safe is not None and not each.cmodx_rule:
            raise ArchDefinitionError(f"arch {label!r}: cmodx_safe needs a cmodx_rule naming "
                                      "what it allows")
    for name, value in (("elf_machine", arch.elf_machine),):
        if not isinstance(value, str) or not value:
            raise ArchDefinitionError(f"arch {arch.name!r}: {name} must be a non-empty str")
    if not arch.mcount_symbols or not all(isinstance(s, str) for s in arch.mcount_symbols):
        raise ArchDefinitionError(f"arch {arch.name!r}: mcount_symbols must be names")
    if arch.site_len not in arch.nops:
        raise ArchDefinitionError(f"arch {arch.name!r}: no {arch.site_len}-byte nop "
                                  "for its jump-label sites (site_len)")
    return arch


def discover(path: Iterable[str], package: str) -> dict[str, Arch]:
    """Import every subpackage of ``package`` (found on ``path``) that declares
    ``ARCH``, check each, and return them by name in name order."""
    found: dict[str, Arch] = {}
    for info in pkgutil.iter_modules(list(path)):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        if hasattr(module, "ARCH"):
            arch = check_arch(module)
            found[arch.name] = arch
    return dict(sorted(found.items()))


ARCHES: dict[str, Arch] = discover(__path__, __name__)
NAMES: tuple[str, ...] = tuple(ARCHES)


def get_arch(name: str) -> Arch:
    """The arch called ``name``, or :class:`UnknownArch` listing the valid ones."""
    try:
        return ARCHES[name]
    except KeyError:
        raise UnknownArch(f"unknown arch {name!r} (known: {', '.join(NAMES)})") from None


def arch_for_elf_machine(e_machine: str) -> Arch | None:
    """The registered arch whose ELF ``e_machine`` is ``e_machine`` (e.g. EM_PPC)."""
    return next((a for a in ARCHES.values() if a.elf_machine == e_machine), None)


__all__ = ["ARCHES", "Arch", "ArchDefinitionError", "ArchOps", "CAPABILITIES",
           "OPTIONAL_CAPABILITIES", "Cost",
           "EncodingError", "NAMES", "TrapKind", "TrapVector", "UnknownArch",
           "arch_for_elf_machine", "check_arch", "discover", "get_arch"]

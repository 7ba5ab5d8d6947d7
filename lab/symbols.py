"""A module's functions as a kernel developer looks for them: where, how big,
and whether a kprobe may go there (and if not, the kernel's reason).

Probe-ability is the kprobe manager's own answer: a probe is registered at
the function's entry on a guest that does not run, and unregistered
(v5.10 ``register_kprobe``: ``check_kprobe_address_safe``,
``arch_prepare_kprobe``), so the listing and ``kisim kprobe`` never differ.
Used by ``kisim symbols`` and ``kisim kprobe --every-instruction``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from kbuild import Build
from patcher.errors import PatchError
from probes.kprobes import Kprobe, Kprobes
from sim.elf import Image
from sim.guest import Guest

#: (start, size, name): a function of the image, as :attr:`sim.elf.Image.functions`.
Function = tuple[int, int, str]


@dataclass
class FunctionInfo:
    """One function of a module, and whether its entry takes a kprobe."""

    module: str
    name: str
    address: int
    size: int
    probeable: bool
    reason: str | None = None       # the refusal, "EINVAL: ..." (None: probe-able)

    def to_json(self) -> dict:
        return asdict(self)


def module_functions(image: Image, module: str) -> list[Function]:
    """The functions ``module`` defines, by address."""
    return [(s.addr, s.size, s.name) for s in image.symbols.in_module(module)
            if s.kind == "func"]


def functions_of(image: Image, target: str) -> list[Function]:
    """``MOD`` (every function of that module) or ``[MOD:]FUNC`` (that one).

    :class:`PatchError` ENOENT when neither names anything;
    :class:`sim.elf.SymbolError` when FUNC is ambiguous.
    """
    symbols = image.symbols
    if target in symbols.modules:
        return module_functions(image, target)
    found = [s for s in symbols.candidates(target) if s.kind == "func"]
    if not found:
        modules = ", ".join(symbols.modules) or "none"
        raise PatchError("ENOENT", f"{target!r} is no module (modules: {modules}) and no "
                                   "function of the kernel")
    addr = symbols[target]                  # SymbolError when several define it
    return [(s.addr, s.size, s.name) for s in found if s.addr == addr]


def list_functions(kernel: Build, modules: list[str] | None = None) -> list[FunctionInfo]:
    """Each function of ``modules`` (default: every module built in), with
    whether a kprobe may go at its entry."""
    guest = Guest(kernel, cpus=1)
    kprobes = Kprobes(guest)
    symbols = guest.image.symbols
    unknown = [m for m in modules or () if m not in symbols.modules]
    if unknown:
        raise PatchError("ENOENT", f"no module {unknown[0]!r} in this kernel (modules: "
                                   f"{', '.join(symbols.modules) or 'none'})")
    rows = []
    for module in modules or symbols.modules:
        for start, size, name in module_functions(guest.image, module):
            try:
                kprobes.unregister_kprobe(kprobes.register_kprobe(
                    Kprobe(addr=start, pre_handler="kprobe_empty_pre_handler")))
                rows.append(FunctionInfo(module, name, start, size, True))
            except PatchError as err:
                rows.append(FunctionInfo(module, name, start, size, False, str(err)))
    return rows


__all__ = ["Function", "FunctionInfo", "functions_of", "list_functions", "module_functions"]

"""Ablations: a protocol with one of its steps removed or reordered.

The steps are read off the protocol itself, not named per arch: one run of
the protocol over one site is recorded through a :class:`RecordingPort`,
and each kind of step it made yields variants:

- each sync round removed (``first sync``/``middle sync``/``final sync``
  when there are three, ``sync k`` otherwise, ``sync`` when there is one);
- with more than one sync round: ``syncs between stores``, i.e. every
  store before one sync (all rounds dropped, one after the protocol returns);
- ``breakpoint``: stores of the arch's breakpoint (x86 ``int3``) removed;
- ``flush``: every icache flush removed; and ``flush and sync``.

:class:`Ablated` is a picklable protocol wrapper, so ablated variants run in
worker processes and on Dask like any other protocol.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from arches import Arch, get_arch
from arches.base import BreakpointHandler, TextPokeBatch, TextPort

ALL = -1


@dataclass(frozen=True)
class Ablation:
    """Which steps of each protocol run to drop (sync ordinals count from 1)."""

    name: str
    drop_syncs: frozenset[int] = frozenset()   # ordinals, or {ALL}
    one_sync_after: bool = False
    drop_breakpoints: bool = False
    drop_flushes: bool = False

    def drops_sync(self, ordinal: int) -> bool:
        return ALL in self.drop_syncs or ordinal in self.drop_syncs


class RecordingPort:
    """A TextPort that only records the kind of each step (``write``, ``sync``, ``flush``)."""

    def __init__(self, arch: Arch, read: Callable[[int, int], bytes]) -> None:
        self.arch, self._read = arch, read
        self.steps: list[tuple[str, bytes]] = []

    def read(self, addr: int, size: int) -> bytes:
        return self._read(addr, size)

    def write_text(self, addr: int, data: bytes) -> None:
        kind = "breakpoint" if _is_breakpoint(self.arch, self, addr, data) else "write"
        self.steps.append((kind, data))

    def write_data(self, addr: int, data: bytes) -> None:
        pass

    def sync_all(self) -> None:
        self.steps.append(("sync", b""))

    def flush_icache(self, begin: int, end: int) -> None:
        self.steps.append(("flush", b""))

    @contextlib.contextmanager
    def breakpoint_handler(self, handler: BreakpointHandler) -> Iterator[None]:
        yield


def _is_breakpoint(arch: Arch, port: TextPort, addr: int, data: bytes) -> bool:
    """Whether ``data`` is the arch's breakpoint for what ``addr`` holds now."""
    old = port.read(addr, max(len(data), arch.insn_align))
    return data == arch.kprobe_breakpoint(old)[:len(data)]


def _sync_names(n: int) -> list[str]:
    if n == 1:
        return ["sync"]
    if n == 3:
        return ["first sync", "middle sync", "final sync"]
    return [f"sync {k}" for k in range(1, n + 1)]


def ablations(arch: str | Arch, protocol: TextPokeBatch, site: tuple[int, bytes],
              read: Callable[[int, int], bytes]) -> list[Ablation]:
    """Every one-step variant of ``protocol``, from one recorded run over ``site``."""
    arch = get_arch(arch) if isinstance(arch, str) else arch
    port = RecordingPort(arch, read)
    protocol(port, [site])
    kinds = [kind for kind, _ in port.steps]
    syncs = kinds.count("sync")
    out = [Ablation(name, drop_syncs=frozenset({k}))
           for k, name in enumerate(_sync_names(syncs), 1)]
    if syncs > 1:
        out.append(Ablation("syncs between stores", drop_syncs=frozenset({ALL}),
                            one_sync_after=True))
    if "breakpoint" in kinds:
        out.append(Ablation("breakpoint", drop_breakpoints=True))
    if "flush" in kinds:
        out.append(Ablation("flush", drop_flushes=True))
        if syncs:
            out.append(Ablation("flush and sync", drop_syncs=frozenset({ALL}),
                                drop_flushes=True))
    return out


class _AblatedPort:
    """Forwards to ``port`` except the steps ``ablation`` drops."""

    def __init__(self, port: TextPort, ablation: Ablation, arch: Arch) -> None:
        self.port, self.ablation, self.arch = port, ablation, arch
        self.syncs = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.port, name)

    def write_text(self, addr: int, data: bytes) -> None:
        if self.ablation.drop_breakpoints and _is_breakpoint(self.arch, self.port, addr, data):
            return
        self.port.write_text(addr, data)

    def sync_all(self) -> None:
        self.syncs += 1
        if not self.ablation.drops_sync(self.syncs):
            self.port.sync_all()

    def flush_icache(self, begin: int, end: int) -> None:
        if not self.ablation.drop_flushes:
            self.port.flush_icache(begin, end)


@dataclass(frozen=True)
class Ablated:
    """``protocol`` run with ``ablation``'s steps removed: itself a protocol."""

    protocol: TextPokeBatch
    ablation: Ablation
    arch: str

    @property
    def __name__(self) -> str:
        return f"{getattr(self.protocol, '__name__', 'protocol')} [{self.ablation.name}]"

    def __call__(self, port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
        self.protocol(_AblatedPort(port, self.ablation, get_arch(self.arch)), sites)
        if self.ablation.one_sync_after:
            port.sync_all()

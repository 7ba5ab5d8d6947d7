"""Ablations: a protocol with one of its steps removed or reordered.

The steps are read off the protocol itself, not named per arch: one run of
the protocol over the checker's sites (going live) is recorded through a
:class:`RecordingPort`, and each kind of step it made yields variants. Only
steps that do something for these sites count: a store that leaves the
bytes as they were is none, and a sync round with no store since the last
one orders nothing (x86 ``text_poke_bp`` on a one-byte kprobe breakpoint
makes two such rounds before its store):

- each effective sync round removed (named by its place among all rounds:
  ``first sync``/``middle sync``/``final sync`` when there are three,
  ``sync k`` otherwise, ``sync`` when there is one);
- with more than one effective sync round: ``syncs between stores``, i.e.
  every store before one sync (all rounds dropped, one after the protocol
  returns);
- ``breakpoint``: stores of a temporary breakpoint removed (x86 ``int3``:
  the breakpoint a later store of the same run replaces; an armed kprobe's
  breakpoint is the site's new value and stays);
- ``flush``: every icache flush removed; and ``flush and sync``;
- ``stop_machine``: each stop_machine() replaced by a plain call of its
  function, the other CPUs running and nobody serializing on the way out
  (ARM ``patch_text``).

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
    plain_stop_machine: bool = False

    def drops_sync(self, ordinal: int) -> bool:
        return ALL in self.drop_syncs or ordinal in self.drop_syncs


class RecordingPort:
    """A TextPort that records each step (``write``, ``breakpoint``, ``sync``,
    ``flush``) over a private copy of the text it stores to."""

    def __init__(self, arch: Arch, read: Callable[[int, int], bytes]) -> None:
        self.arch, self._read = arch, read
        self.steps: list[tuple[str, int, bytes]] = []
        self._stored: dict[int, int] = {}

    def read(self, addr: int, size: int) -> bytes:
        base = bytearray(self._read(addr, size))
        for i in range(size):
            if addr + i in self._stored:
                base[i] = self._stored[addr + i]
        return bytes(base)

    def write_text(self, addr: int, data: bytes) -> None:
        if self.read(addr, len(data)) == data:
            return                                  # changes nothing: no step
        kind = "breakpoint" if _is_breakpoint(self.arch, self, addr, data) else "write"
        self.steps.append((kind, addr, data))
        self._stored.update({addr + i: b for i, b in enumerate(data)})

    def write_data(self, addr: int, data: bytes) -> None:
        pass

    def sync_all(self) -> None:
        self.steps.append(("sync", 0, b""))

    def flush_icache(self, begin: int, end: int) -> None:
        self.steps.append(("flush", begin, b""))

    def stop_machine(self, fn: Callable[[], None]) -> None:
        self.steps.append(("stop_machine", 0, b""))
        fn()

    def kinds(self) -> list[str]:
        """The steps' kinds; a breakpoint no later store replaces is a plain write."""
        out = []
        for i, (kind, addr, data) in enumerate(self.steps):
            if kind == "breakpoint" and not any(
                    k in ("write", "breakpoint") and a <= addr < a + len(d)
                    for k, a, d in self.steps[i + 1:]):
                kind = "write"
            out.append(kind)
        return out

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


def ablations(arch: str | Arch, protocol: TextPokeBatch, sites: Sequence[tuple[int, bytes]],
              read: Callable[[int, int], bytes]) -> list[Ablation]:
    """Every one-step variant of ``protocol``, from one recorded run over ``sites``."""
    arch = get_arch(arch) if isinstance(arch, str) else arch
    port = RecordingPort(arch, read)
    protocol(port, list(sites))
    kinds = port.kinds()
    syncs = kinds.count("sync")
    effective, stored = [], False
    for kind in kinds:
        if kind == "sync":
            effective.append(stored)
            stored = False
        elif kind in ("write", "breakpoint"):
            stored = True
    out = [Ablation(name, drop_syncs=frozenset({k}))
           for k, name in enumerate(_sync_names(syncs), 1) if effective[k - 1]]
    if sum(effective) > 1:
        out.append(Ablation("syncs between stores", drop_syncs=frozenset({ALL}),
                            one_sync_after=True))
    if "breakpoint" in kinds:
        out.append(Ablation("breakpoint", drop_breakpoints=True))
    if "flush" in kinds:
        out.append(Ablation("flush", drop_flushes=True))
        if any(effective):
            out.append(Ablation("flush and sync", drop_syncs=frozenset({ALL}),
                                drop_flushes=True))
    if "stop_machine" in kinds:
        out.append(Ablation("stop_machine", plain_stop_machine=True))
    return out


class _AblatedPort:
    """Forwards to ``port`` except the steps ``ablation`` drops (``final``: the
    bytes each site ends with, so that a breakpoint that is a site's new value
    is not dropped as a temporary one)."""

    def __init__(self, port: TextPort, ablation: Ablation, arch: Arch,
                 final: dict[int, bytes]) -> None:
        self.port, self.ablation, self.arch, self.final = port, ablation, arch, final
        self.syncs = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.port, name)

    def write_text(self, addr: int, data: bytes) -> None:
        if (self.ablation.drop_breakpoints and _is_breakpoint(self.arch, self.port, addr, data)
                and not self.final.get(addr, b"").startswith(data)):
            return
        self.port.write_text(addr, data)

    def sync_all(self) -> None:
        self.syncs += 1
        if not self.ablation.drops_sync(self.syncs):
            self.port.sync_all()

    def flush_icache(self, begin: int, end: int) -> None:
        if not self.ablation.drop_flushes:
            self.port.flush_icache(begin, end)

    def stop_machine(self, fn: Callable[[], None]) -> None:
        if self.ablation.plain_stop_machine:
            fn()
        else:
            self.port.stop_machine(fn)


@dataclass(frozen=True)
class Ablated:
    """``protocol`` run with ``ablation``'s steps removed: itself a protocol."""

    protocol: TextPokeBatch
    ablation: Ablation
    arch: str | Arch                # a name, or the Arch itself (a variant: Thumb-2)

    @property
    def __name__(self) -> str:
        return f"{getattr(self.protocol, '__name__', 'protocol')} [{self.ablation.name}]"

    def __call__(self, port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
        arch = get_arch(self.arch) if isinstance(self.arch, str) else self.arch
        self.protocol(_AblatedPort(port, self.ablation, arch, dict(sites)), sites)
        if self.ablation.one_sync_after:
            port.sync_all()

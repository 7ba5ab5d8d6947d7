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
  (ARM ``patch_text``);
- with out-of-line code in the batch (:class:`~arches.base.OutOfLine`, an
  optprobe's detour): ``out-of-line code last``, the protocol run over the
  sites first and over the out-of-line code after (the branch published
  before its target is written), and ``out-of-line flush and sync``, the
  flushes that cover no site and the sync rounds after out-of-line stores
  only removed. Those rounds are not counted in the sync names above.

:class:`Ablated` is a picklable protocol wrapper, so ablated variants run in
worker processes and on Dask like any other protocol.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from arches import Arch, get_arch
from arches.base import BreakpointHandler, TextPokeBatch, TextPort, split_out_of_line

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
    code_last: bool = False          # out-of-line code written after the sites
    drop_code_sync: bool = False     # no flush or sync round for out-of-line code alone

    def drops_sync(self, ordinal: int) -> bool:
        return ALL in self.drop_syncs or ordinal in self.drop_syncs


class RecordingPort:
    """A TextPort that records each step (``write``, ``breakpoint``, ``sync``,
    ``flush``) over a private copy of the text it stores to."""

    def __init__(self, arch: Arch, read: Callable[[int, int], bytes],
                 code: Sequence[tuple[int, bytes]] = ()) -> None:
        self.arch, self._read = arch, read
        self.code = _spans(code)
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
        kind = "code" if _within(self.code, addr) else \
            "breakpoint" if _is_breakpoint(self.arch, self, addr, data) else "write"
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


def _spans(entries: Sequence[tuple[int, bytes]]) -> list[tuple[int, int]]:
    return [(a, a + len(c)) for a, c in entries]


def _within(spans: Sequence[tuple[int, int]], addr: int) -> bool:
    return any(b <= addr < e for b, e in spans)


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
    code, _ = split_out_of_line(sites)
    port = RecordingPort(arch, read, code)
    protocol(port, list(sites))
    kinds = port.kinds()
    effective: list[bool | None] = []     # per round; None: after out-of-line stores only
    stored = wrote_code = False
    for kind in kinds:
        if kind == "sync":
            effective.append(stored if stored or not wrote_code else None)
            stored = wrote_code = False
        elif kind in ("write", "breakpoint"):
            stored = True
        elif kind == "code":
            wrote_code = True
    named = [e for e in effective if e is not None]
    out = [Ablation(name, drop_syncs=frozenset({k}))
           for k, name in enumerate(_sync_names(len(named)), 1) if named[k - 1]]
    if sum(named) > 1:
        out.append(Ablation("syncs between stores", drop_syncs=frozenset({ALL}),
                            one_sync_after=True))
    if "breakpoint" in kinds:
        out.append(Ablation("breakpoint", drop_breakpoints=True))
    if "flush" in kinds:
        out.append(Ablation("flush", drop_flushes=True))
        if any(named):
            out.append(Ablation("flush and sync", drop_syncs=frozenset({ALL}),
                                drop_flushes=True))
    if "stop_machine" in kinds:
        out.append(Ablation("stop_machine", plain_stop_machine=True))
    if code:
        out.append(Ablation("out-of-line code last", code_last=True))
        if None in effective or "flush" in kinds:
            out.append(Ablation("out-of-line flush and sync", drop_code_sync=True))
    return out


class _AblatedPort:
    """Forwards to ``port`` except the steps ``ablation`` drops (``final``: the
    bytes each site ends with, so that a breakpoint that is a site's new value
    is not dropped as a temporary one)."""

    def __init__(self, port: TextPort, ablation: Ablation, arch: Arch,
                 final: dict[int, bytes], code: Sequence[tuple[int, bytes]] = ()) -> None:
        self.port, self.ablation, self.arch, self.final = port, ablation, arch, final
        self.syncs = 0
        self.code = _spans(code)
        self.stores: list[bool] = []            # since the last round: out-of-line each

    def __getattr__(self, name: str) -> object:
        return getattr(self.port, name)

    def write_text(self, addr: int, data: bytes) -> None:
        if (self.ablation.drop_breakpoints and _is_breakpoint(self.arch, self.port, addr, data)
                and not self.final.get(addr, b"").startswith(data)):
            return
        self.stores.append(_within(self.code, addr))
        self.port.write_text(addr, data)

    def sync_all(self) -> None:
        """A round after out-of-line stores only is not counted among the sync rounds."""
        code_only, self.stores = bool(self.stores) and all(self.stores), []
        if code_only:
            if not self.ablation.drop_code_sync:
                self.port.sync_all()
            return
        self.syncs += 1
        if not self.ablation.drops_sync(self.syncs):
            self.port.sync_all()

    def flush_icache(self, begin: int, end: int) -> None:
        code_only = all(_within(self.code, a) for a in range(begin, end)
                        if any(a0 <= a < a0 + len(c) for a0, c in self.final.items()))
        if self.ablation.drop_flushes or (self.ablation.drop_code_sync and code_only):
            return
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
        code, rest = split_out_of_line(sites)
        ablated = _AblatedPort(port, self.ablation, arch, dict(sites), code)
        if self.ablation.code_last and code:
            self.protocol(ablated, rest)
            self.protocol(ablated, code)
        else:
            self.protocol(ablated, sites)
        if self.ablation.one_sync_after:
            port.sync_all()

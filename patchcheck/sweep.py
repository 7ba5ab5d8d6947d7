"""Sweeps of the patch checker: serial, in processes, or on a Dask cluster.

A :class:`CheckSpec` names what to check (arch, CPUs, protocol, ablation)
and is picklable, so the same seeds run the same way anywhere: each worker
builds one :class:`~patchcheck.checker.PatchChecker` per spec and runs chunks
of consecutive seeds (:func:`run_chunk`). Chunks are consumed in seed
order, so ``jobs=N`` and a Dask cluster give exactly the serial result.

Memory stays flat in the number of seeds: a :class:`CheckResult` keeps
counts per kind and the first :data:`KEEP` findings of each kind; every
finding can be streamed to ``on_finding`` as it is consumed.

Usage::

    spec = CheckSpec(arches.NAMES[0], cpus=2, protocol="mypkg.patching:my_patch_text")
    result = sweep(spec, range(10_000), jobs=2)
    for f in result.findings:
        print(f.line())
"""
from __future__ import annotations

import importlib
import multiprocessing
import signal
import sys
import threading
import time
from collections import Counter, deque
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator

from arches import get_arch
from arches.base import TextPokeBatch
from patchcheck.checker import KINDS, Finding, PatchChecker
from patchcheck.ablate import Ablated, Ablation, ablations
from patchcheck.kernel import KernelChecker
from patchcheck.sites import DEFAULT_SITES, CheckerError, parse_sites

KEEP = 10                  # first findings kept per kind
CHUNK = 100                # most seeds in one worker task
MAX_SEEDS = 10 ** 9        # the most interleavings one sweep may ask for
MAX_SEED = 2 ** 63 - 1     # the largest seed
CONNECT_TIMEOUT = 3        # seconds to reach a Dask scheduler


def load_protocol(ref: str) -> tuple[TextPokeBatch, str]:
    """Import ``package.module:function``; return it and the sys.path root it came from."""
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise CheckerError(f"--protocol {ref!r}: expected package.module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise CheckerError(f"--protocol {ref!r}: cannot import {module_name}: {err}") from None
    fn: object = module
    for part in attr.split("."):
        fn = getattr(fn, part, None)
    if not callable(fn):
        raise CheckerError(f"--protocol {ref!r}: {module_name} has no callable {attr}")
    file = Path(module.__file__ or ".").resolve()
    return fn, str(file.parents[module_name.count(".") + (file.name == "__init__.py")])


@dataclass(frozen=True)
class CheckSpec:
    """What one sweep checks. ``protocol``: None (the arch's own),
    ``"module:function"``, or a module-level callable ``protocol(port, sites)``."""

    arch: str
    cpus: int = 2
    protocol: str | TextPokeBatch | None = None
    naive: bool = False
    without: str | None = None      # an ablation name (see ablation_names)
    path: str | None = None         # sys.path entry a "module:function" protocol needs
    kernel: bool = False            # patch the guest kernel under hackbench instead
    sites: tuple[str, ...] = DEFAULT_SITES   # the loop's site kinds (patchcheck.sites)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sites", parse_sites(self.sites))   # "a,b" or names

    def checker(self) -> PatchChecker | KernelChecker:
        """The loop checker for this spec, or the guest-kernel checker with ``kernel``."""
        loop = self._loop_checker()
        if not self.kernel:
            return loop
        return KernelChecker(self.arch, self.cpus, protocol=loop.patcher.protocol,
                             protocol_name=loop.protocol_name, sites=self.sites)

    def _loop_checker(self) -> PatchChecker:
        if self.path and self.path not in sys.path:
            sys.path.insert(0, self.path)
        protocol = load_protocol(self.protocol)[0] if isinstance(self.protocol, str) \
            else self.protocol
        checker = PatchChecker(self.arch, self.cpus, naive=self.naive, protocol=protocol,
                               sites=self.sites)
        if self.without is not None:
            found = {a.name: a for a in _ablations(checker)}
            if self.without not in found:
                raise CheckerError(f"{self.arch}: {checker.protocol_name} has no step "
                                   f"{self.without!r} to remove (steps: "
                                   f"{', '.join(found)})")
            ablated = Ablated(checker.patcher.protocol, found[self.without], self.arch)
            checker.patcher.protocol = ablated
            checker.protocol_name = ablated.__name__
        return checker

    def replay_command(self, seed: int) -> str:
        """The command line that replays ``seed`` of this spec."""
        words = ["kisim", "patchcheck", "--arch", self.arch, "--cpus", str(self.cpus)]
        if self.naive:
            words.append("--naive")
        if self.protocol is not None:
            ref = self.protocol if isinstance(self.protocol, str) else \
                f"{self.protocol.__module__}:{self.protocol.__qualname__}"
            words += ["--protocol", ref]
        if self.sites != DEFAULT_SITES:
            words += ["--site", ",".join(self.sites)]
        if self.without is not None:
            words += ["--without", f"'{self.without}'"]
        if self.kernel:
            words.append("--kernel")
        return " ".join(words + ["--replay", str(seed)])


def _ablations(checker: PatchChecker) -> list[Ablation]:
    return ablations(checker.arch, checker.patcher.protocol,
                     [(s.addr, s.on) for s in checker.sites], checker.machine.read)


def ablation_names(spec: CheckSpec) -> list[str]:
    """The one-step variants of ``spec``'s protocol, in protocol order."""
    return [a.name for a in _ablations(_cached(replace(spec, without=None, kernel=False)))]


@dataclass
class Chunk:
    """What one worker task returns: every finding of its seeds, in seed order."""

    start: int
    interleavings: int
    findings: list[Finding]
    executed: dict[str, int]


_local = threading.local()


def _cached(spec: CheckSpec) -> PatchChecker | KernelChecker:
    cache = getattr(_local, "checkers", None)
    if cache is None:
        cache = _local.checkers = {}
    if spec not in cache:
        cache[spec] = spec.checker()
    return cache[spec]


def run_chunk(spec: CheckSpec, start: int, stop: int, stop_at_first: bool = False) -> Chunk:
    """Run seeds ``start..stop-1`` of ``spec`` (in a worker: one checker per spec)."""
    checker = _cached(spec)
    checker.executed = Counter()
    findings: list[Finding] = []
    done = 0
    for seed in range(start, stop):
        found = checker.run_seed(seed)
        findings += found
        done += 1
        if found and stop_at_first:
            break
    return Chunk(start, done, findings, dict(checker.executed))


@dataclass
class CheckResult:
    """A sweep's outcome: counts, and the first :data:`KEEP` findings of each kind."""

    spec: CheckSpec
    protocol: str
    interleavings: int = 0
    seeds_with_findings: int = 0
    counts: Counter = field(default_factory=Counter)
    first: dict[str, list[Finding]] = field(default_factory=dict)
    executed: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    interrupted: bool = False

    def add(self, chunk: Chunk, on_finding: Callable[[Finding], None] | None) -> None:
        self.interleavings += chunk.interleavings
        self.seeds_with_findings += len({f.seed for f in chunk.findings})
        self.executed.update(chunk.executed)
        for f in chunk.findings:
            self.counts[f.kind] += 1
            kept = self.first.setdefault(f.kind, [])
            if len(kept) < KEEP:
                kept.append(f)
            if on_finding is not None:
                on_finding(f)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def findings(self) -> list[Finding]:
        """The kept findings (first of each kind), in seed order."""
        return sorted((f for kept in self.first.values() for f in kept),
                      key=lambda f: (f.seed, f.cpu))

    def first_seed(self, kind: str | None = None) -> int | None:
        seeds = [kept[0].seed for k, kept in self.first.items() if kind in (None, k)]
        return min(seeds) if seeds else None

    def to_json(self) -> dict:
        return {"arch": self.spec.arch, "protocol": self.protocol, "naive": self.spec.naive,
                "without": self.spec.without, "kernel": self.spec.kernel,
                "sites": list(self.spec.sites),
                "cpus": self.spec.cpus,
                "interleavings": self.interleavings, "seconds": round(self.seconds, 3),
                "interrupted": self.interrupted, "findings_total": self.total,
                "seeds_with_findings": self.seeds_with_findings,
                "by_kind": {k: self.counts[k] for k in KINDS if self.counts[k]},
                "first_seed_by_kind": {k: kept[0].seed for k, kept in self.first.items()},
                "executed": dict(self.executed),
                "findings": [f.to_json() for f in self.findings],
                "replay": (self.spec.replay_command(self.first_seed())
                           if self.total else None)}


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _chunks(seeds: range, size: int) -> Iterator[tuple[int, int]]:
    for start in range(seeds.start, seeds.stop, size):
        yield start, min(start + size, seeds.stop)


def _in_order(submit: Callable[[int, int], Future], spans: Iterable[tuple[int, int]],
              window: int) -> Iterator[Chunk]:
    """Submit spans with at most ``window`` in flight; yield results in seed order."""
    spans = iter(spans)
    flight: deque[Future] = deque()
    try:
        for span in spans:
            flight.append(submit(*span))
            if len(flight) >= window:
                yield flight.popleft().result()
        while flight:
            yield flight.popleft().result()
    finally:
        for fut in flight:
            fut.cancel()


def sweep(spec: CheckSpec, seeds: range, *, jobs: int = 1, scheduler: str | None = None,
          progress: Callable[[int], None] | None = None,
          on_finding: Callable[[Finding], None] | None = None,
          stop_at_first: bool = False) -> CheckResult:
    """Run ``seeds`` of ``spec``: serially, in ``jobs`` processes, or on Dask at ``scheduler``.

    ``progress(n)`` is told of every n seeds done. Ctrl-C ends the sweep
    early with ``interrupted`` set and every finding consumed so far.
    ``stop_at_first`` ends it at the first seed with a finding.
    """
    if not 1 <= len(seeds) <= MAX_SEEDS or not 0 <= seeds.start <= MAX_SEED - len(seeds):
        raise CheckerError(f"seeds {seeds.start}..{seeds.stop - 1}: at most {MAX_SEEDS} "
                           f"seeds, each in 0..{MAX_SEED}")
    get_arch(spec.arch)
    probe = _cached(spec)                        # fails here, once, on a bad spec
    result = CheckResult(spec, probe.protocol_name)
    begin = time.perf_counter()
    serial = scheduler is None and (jobs <= 1 or len(seeds) <= CHUNK)
    size = 1 if serial else max(1, min(CHUNK, len(seeds) // (8 * max(jobs, 1))))
    executor: ProcessPoolExecutor | None = None
    client = None
    chunks: Iterator[Chunk] | None = None
    try:
        if serial:
            chunks = (run_chunk(spec, a, b) for a, b in _chunks(seeds, 1))
        elif scheduler is None:
            executor = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                                           initializer=_ignore_sigint)
            chunks = _in_order(lambda a, b: executor.submit(run_chunk, spec, a, b,
                                                            stop_at_first),
                               _chunks(seeds, size), 4 * jobs)
        else:
            client = _dask_client(scheduler)
            workers = max(1, len(client.scheduler_info().get("workers", {})))
            chunks = _in_order(lambda a, b: client.submit(run_chunk, spec, a, b,
                                                          stop_at_first, pure=False),
                               _chunks(seeds, size), 4 * workers)
        for chunk in chunks:
            result.add(chunk, on_finding)
            if progress is not None:
                progress(chunk.interleavings)
            if stop_at_first and chunk.findings:
                break
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        if chunks is not None:
            chunks.close()                       # cancel what is still in flight
        if executor is not None:
            executor.shutdown(wait=not result.interrupted, cancel_futures=True)
        if client is not None:
            client.close()
    result.seconds = time.perf_counter() - begin
    return result


def _dask_client(address: str):
    """A Dask distributed client for ``address`` (the optional ``kisim[dask]`` extra)."""
    try:
        from distributed import Client
    except ImportError:
        raise CheckerError("--scheduler needs Dask: pip install 'kisim[dask]'") from None
    try:
        return Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as err:
        raise CheckerError(f"--scheduler {address}: cannot connect: {err}") from None


@dataclass(frozen=True)
class AblationRow:
    """One line of the ablation table."""

    step: str                 # "(none)" for the protocol as written
    caught: bool
    first_seed: int | None
    kind: str | None
    seeds_run: int
    replay: str | None

    def to_json(self) -> dict:
        return {"step_removed": self.step, "caught": self.caught,
                "first_seed": self.first_seed, "kind": self.kind,
                "seeds_run": self.seeds_run, "replay": self.replay}


def ablate(spec: CheckSpec, seeds: range,
           **kw: object) -> tuple[str, list[AblationRow], bool]:
    """Check ``spec``'s protocol as written, then with each step removed in turn.

    Each variant runs until its first finding (at most ``seeds``); the
    protocol as written runs all of ``seeds``. Returns the protocol's name,
    the rows (the unmodified protocol first) and whether Ctrl-C cut it short.
    """
    rows = []
    for name in [None] + ablation_names(spec):
        variant = replace(spec, without=name)
        result = sweep(variant, seeds, stop_at_first=name is not None, **kw)
        first = result.findings[0] if result.total else None
        rows.append(AblationRow(name or "(none)", first is not None,
                                first.seed if first else None,
                                first.kind if first else None, result.interleavings,
                                variant.replay_command(first.seed) if first else None))
        if result.interrupted:
            return _cached(spec).protocol_name, rows, True
    return _cached(spec).protocol_name, rows, False

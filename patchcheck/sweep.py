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

import functools
import importlib
import importlib.util
import os
import pickle
import shlex
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import fsio
from arches import Arch, get_arch
from arches.base import TextPokeBatch
from kbuild.modules import load_module, load_modules
from patchcheck.ablate import Ablated, Ablation, ablations
from patchcheck.checker import KINDS, Finding, PatchChecker
from patchcheck.guest import guest_ablations
from patchcheck.guard import (DEFAULT_PROTOCOL_TIMEOUT, ProtocolError, check_signature,
                              described, guarded, time_limited)
from patchcheck.kernel import KernelChecker
from patchcheck.sites import BASE, DEFAULT_SITES, CheckerError, arch_label, parse_sites
from workers import JOBS_PER_CPU, max_jobs, no_sigint, ordered_map

KEEP = 10                  # first findings kept per kind
CHUNK = 100                # most seeds in one worker task
MAX_SEEDS = 10 ** 9        # the most interleavings one sweep may ask for
MAX_SEED = 2 ** 63 - 1     # the largest seed


def load_protocol(ref: str, timeout: float | None = DEFAULT_PROTOCOL_TIMEOUT
                  ) -> tuple[TextPokeBatch, str]:
    """Import ``package.module:function`` (within ``timeout`` seconds, as a run of it);
    return it and the sys.path root it came from."""
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise CheckerError(f"--protocol {ref!r}: expected package.module:function")
    try:
        found = importlib.util.find_spec(module_name)
        if found is not None and found.has_location and found.origin:
            # the source, and its bytecode cache if there is one: a FIFO there hangs import
            fsio.read_regular(found.origin, what="protocol source")
            if found.cached and os.path.lexists(found.cached):
                fsio.read_regular(found.cached, what="protocol bytecode cache")
        with time_limited(ref, timeout, f"importing {module_name}"):
            module = importlib.import_module(module_name)
    except (ImportError, fsio.UnsafePath) as err:
        raise CheckerError(f"--protocol {ref!r}: cannot import {module_name}: {err}") from None
    except ProtocolError:                            # it looped or exited (time_limited)
        raise
    except Exception as err:                         # the module's own code failed
        raise CheckerError(f"--protocol {ref!r}: importing {module_name} raised "
                           f"{described(err)}") from None
    fn: object = module
    for part in attr.split("."):
        fn = getattr(fn, part, None)
    if not callable(fn):
        raise CheckerError(f"--protocol {ref!r}: {module_name} has no callable {attr}")
    check_signature(fn, ref)
    source = getattr(module, "__file__", None)
    if not source:
        raise CheckerError(f"--protocol {ref!r}: {module_name} has no source file (built "
                           "in, or a namespace package); workers import a protocol from its file")
    file = Path(source).resolve()
    return fn, str(file.parents[module_name.count(".") + (file.name == "__init__.py")])


Overrides = tuple[tuple[str, str], ...]
ON_HANG = ("stop", "continue")      # what a sweep does after a protocol that did not return


def _overrides(given: Mapping[str, str] | Iterable[tuple[str, str]]) -> Overrides:
    """``--set`` options as ``((NAME, value), ...)``, in order, without ``CONFIG_``."""
    if isinstance(given, str):
        raise CheckerError(f"overrides {given!r}: a mapping of NAME to value, or pairs")
    pairs = given.items() if isinstance(given, Mapping) else given
    return tuple({str(name).removeprefix("CONFIG_"): str(value)
                  for name, value in pairs}.items())


@functools.lru_cache(maxsize=None)
def arch_for(name: str, overrides: Overrides = ()) -> Arch:
    """The arch ``name``'s defconfig kernel runs on with ``overrides`` set, as a build
    of it would (:meth:`arches.base.Arch.for_config`: ``THUMB2_KERNEL=y`` on arm is
    the Thumb-2 variant). Each override must take, as for ``kisim build --set``;
    :class:`CheckerError` (one line) if one does not."""
    arch = get_arch(name)
    if not overrides:
        return arch
    import kconfig
    try:
        kconf = kconfig.defconfig(name)
        kconfig.set_values(kconf, dict(overrides), name)
    except kconfig.KconfigError as err:
        raise CheckerError(f"--set: {err}") from None
    return arch.for_config(kconfig.enabled(kconf))


@dataclass(frozen=True)
class CheckSpec:
    """What one sweep checks. ``protocol``: None (the arch's own),
    ``"module:function"``, or a module-level callable ``protocol(port, sites)``.
    ``overrides`` (``--set``: NAME -> value, a mapping or pairs) configure the
    kernel: the loop runs on the arch that configuration builds (:func:`arch_for`;
    ``{"THUMB2_KERNEL": "y"}``: Thumb-2), and ``kernel`` boots that build."""

    arch: str
    cpus: int = 2
    protocol: str | TextPokeBatch | None = None
    naive: bool = False
    without: str | None = None      # an ablation name (see ablation_names)
    path: str | None = None         # sys.path entry a "module:function" protocol needs
    kernel: bool = False            # patch the guest kernel under hackbench instead
    sites: tuple[str, ...] = DEFAULT_SITES   # the loop's site kinds (patchcheck.sites)
    protocol_timeout: float | None = DEFAULT_PROTOCOL_TIMEOUT   # seconds per user run
    modules: tuple[str, ...] = ()   # with kernel: guest module sources built in
    overrides: Overrides = ()       # --set NAME=VALUE, in order (a mapping is accepted)
    guest: bool = False             # check the arch's own patching C on the CPUs (--guest)
    guest_protocol: str | None = None   # with guest: a C function of ``modules`` instead
    patching_source: str | None = None  # with guest: a user's version of the arch's patching.c
    on_hang: str = "stop"           # a protocol that does not return: "stop" or "continue"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sites", parse_sites(self.sites))   # "a,b" or names
        object.__setattr__(self, "overrides", _overrides(self.overrides))
        if self.on_hang not in ON_HANG:
            raise CheckerError(f"on_hang {self.on_hang!r}: one of {', '.join(ON_HANG)}")
        if self.overrides:
            arch_for(self.arch, self.overrides)        # refuses a --set that does not take

    @property
    def arch_spec(self) -> Arch:
        """The arch the checked code runs on: :attr:`arch` as :attr:`overrides` build it."""
        return arch_for(self.arch, self.overrides)

    @property
    def label(self) -> str:
        """The arch as the output names it: ``arm``, ``arm (THUMB2_KERNEL=y)``."""
        if not self.overrides:
            return self.arch
        return f"{self.arch} ({', '.join(f'{k}={v}' for k, v in self.overrides)})"

    def checker(self) -> PatchChecker | KernelChecker:
        """The loop checker for this spec, or the guest-kernel checker with ``kernel``."""
        loop = self._loop_checker()
        if not self.kernel:
            return loop
        return KernelChecker(self.arch, self.cpus, protocol=loop.patcher.protocol,
                             protocol_name=loop.protocol_name, sites=self.sites,
                             modules=self.modules, overrides=dict(self.overrides) or None)

    def _loop_checker(self) -> PatchChecker:
        if self.guest:
            return self._guest_checker()
        if self.path and self.path not in sys.path:
            sys.path.insert(0, self.path)
        protocol = load_protocol(self.protocol, self.protocol_timeout)[0] \
            if isinstance(self.protocol, str) else self.protocol
        if protocol is not None:
            name = self.protocol if isinstance(self.protocol, str) else \
                getattr(protocol, "__qualname__", repr(protocol))
            protocol = guarded(protocol, name, self.protocol_timeout)
        checker = PatchChecker(self.arch_spec, self.cpus, naive=self.naive, protocol=protocol,
                               sites=self.sites)
        if self.without is not None:
            found = {a.name: a for a in _ablations(checker)}
            if self.without not in found:
                raise CheckerError(f"{arch_label(checker.arch)}: {checker.protocol_name} has "
                                   f"no step {self.without!r} to remove (steps: "
                                   f"{', '.join(found)})")
            ablated = Ablated(checker.patcher.protocol, found[self.without], checker.arch)
            checker.patcher.protocol = ablated
            checker.protocol_name = ablated.__name__
        return checker

    def _guest_checker(self) -> PatchChecker:
        """The loop with the guest's own C as the protocol (:mod:`patchcheck.guest`);
        ``without`` compiles one of the arch's steps out."""
        if self.protocol is not None or self.naive:
            raise CheckerError("--guest checks the kernel's C on the CPUs; --protocol and "
                               "--naive check a Python protocol")
        if self.kernel:
            raise CheckerError("--guest runs the loop; --kernel checks the host's protocols on "
                               "the kernel (a kernel that patches itself: kisim boot --set "
                               "PATCHING_IN_GUEST=y)")
        if self.guest_protocol is not None and not self.modules:
            raise CheckerError("--guest-protocol names a function of a --module file")
        arch = self.arch_spec
        if self.without is not None and self.without not in guest_ablations(arch):
            raise CheckerError(f"{arch_label(arch)}: the guest's C has no step "
                               f"{self.without!r} to remove (steps: "
                               f"{', '.join(guest_ablations(arch))})")
        modules = load_modules(self.modules)
        sources = tuple(os.fspath(f.path) for m in modules for f in m.sources)
        patching = None
        if self.patching_source is not None:       # read as a module is: a regular C file
            patching = os.fspath(load_module(self.patching_source).sources[0].path)
        return PatchChecker(arch, self.cpus, sites=self.sites, guest=True,
                            guest_ablation=self.without, guest_sources=sources,
                            guest_protocol=self.guest_protocol,
                            guest_werror=any(m.werror for m in modules),
                            guest_patching=patching)

    def replay_command(self, seed: int) -> str:
        """The command line that replays ``seed`` of this spec."""
        words = ["kisim", "patchcheck", "--arch", self.arch]
        for name, value in self.overrides:
            words += ["--set", shlex.quote(f"{name}={value}")]
        words += ["--cpus", str(self.cpus)]
        if self.naive:
            words.append("--naive")
        if self.protocol is not None:
            ref = self.protocol if isinstance(self.protocol, str) else \
                f"{self.protocol.__module__}:{self.protocol.__qualname__}"
            words += ["--protocol", ref]
        if self.sites != DEFAULT_SITES:
            words += ["--site", ",".join(self.sites)]
        if self.guest:
            words.append("--guest")
        if self.without is not None:
            words += ["--without", f"'{self.without}'"]
        if self.kernel:
            words.append("--kernel")
        for module in self.modules:
            words += ["--module", module]
        if self.guest_protocol is not None:
            words += ["--guest-protocol", self.guest_protocol]
        if self.patching_source is not None:
            words += ["--patching-source", shlex.quote(self.patching_source)]
        return " ".join(words + ["--replay", str(seed)])


def _ablations(checker: PatchChecker) -> list[Ablation]:
    """The protocol's steps, recorded over the loop's text as loaded: after a seed, the
    detours the protocol wrote are still in memory, and rewriting them stores nothing."""
    return ablations(checker.arch, checker.patcher.protocol, checker.batch_entries(),
                     lambda addr, size: checker.text[addr - BASE:addr - BASE + size])


def ablation_names(spec: CheckSpec) -> list[str]:
    """The one-step variants of ``spec``'s protocol, in protocol order (the guest's:
    the arch's ablation macros; none for a user's C routine)."""
    if spec.guest:
        return [] if spec.guest_protocol else list(guest_ablations(spec.arch_spec, spec.sites))
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
    # a module's --module-werror is its ModulePath's, not part of the spec's equality
    key = (spec, tuple(getattr(m, "werror", False) for m in spec.modules))
    if key not in cache:
        cache[key] = spec.checker()
    return cache[key]


def _stops(spec: CheckSpec, findings: Sequence[Finding], stop_at_first: bool) -> bool:
    """Whether a sweep ends after ``findings``: any with ``stop_at_first``; a protocol
    that did not return (``hang``) unless ``spec.on_hang`` is "continue"."""
    return bool(findings) and (stop_at_first or spec.on_hang == "stop" and
                               any(f.kind == "hang" for f in findings))


def run_chunk(spec: CheckSpec, seeds: range, stop_at_first: bool = False) -> Chunk:
    """Run ``seeds`` of ``spec`` (in a worker: one checker per spec); stop early as
    :func:`_stops` says."""
    checker = _cached(spec)
    checker.executed = Counter()
    findings: list[Finding] = []
    done = 0
    for seed in seeds:
        found = checker.run_seed(seed)
        findings += found
        done += 1
        if _stops(spec, found, stop_at_first):
            break
    return Chunk(seeds.start, done, findings, dict(checker.executed))


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
        return {"arch": self.spec.arch,
                **({"set": dict(self.spec.overrides)} if self.spec.overrides else {}),
                "protocol": self.protocol, "naive": self.spec.naive,
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


def _chunks(seeds: range, size: int) -> Iterator[range]:
    for i in range(0, len(seeds), size):
        yield seeds[i:i + size]


def _check_picklable(spec: CheckSpec) -> None:
    """Worker processes get ``spec`` pickled: :class:`CheckerError` if its protocol
    (a Python object, not ``"module:function"``) cannot be."""
    try:
        pickle.dumps(spec)
    except (pickle.PicklingError, AttributeError, TypeError) as err:
        raise CheckerError(f"protocol {spec.protocol!r} cannot be sent to worker processes "
                           f"({type(err).__name__}): give a module-level function or "
                           "'module:function', or run with jobs=1") from None


def sweep(spec: CheckSpec, seeds: range, *, jobs: int = 1, scheduler: str | None = None,
          progress: Callable[[int], None] | None = None,
          on_finding: Callable[[Finding], None] | None = None,
          stop_at_first: bool = False) -> CheckResult:
    """Run ``seeds`` of ``spec``: serially, in ``jobs`` processes, or on Dask at ``scheduler``.

    ``seeds`` is a range (any step): exactly its seeds run, in its order.
    ``jobs`` is at most :func:`max_jobs`. ``progress(n)`` is told of every n
    seeds done. Ctrl-C ends the sweep early with ``interrupted`` set and
    every finding consumed so far; the workers are killed, not waited for.
    Any other exception (SIGTERM's too) also kills them before it propagates.
    ``stop_at_first`` ends it at the first seed with a finding.
    """
    if not isinstance(seeds, range):
        raise CheckerError(f"seeds must be a range, not {type(seeds).__name__}")
    # a range's ends, not min()/max(), which would walk up to 10^9 seeds first
    if not 1 <= len(seeds) <= MAX_SEEDS or \
            not 0 <= min(seeds[0], seeds[-1]) <= max(seeds[0], seeds[-1]) <= MAX_SEED:
        raise CheckerError(f"seeds {seeds}: 1..{MAX_SEEDS} seeds, each in 0..{MAX_SEED}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= max_jobs():
        raise CheckerError(f"jobs {jobs!r}: 1..{max_jobs()} ({JOBS_PER_CPU} per available CPU)")
    get_arch(spec.arch)
    probe = _cached(spec)                        # fails here, once, on a bad spec
    result = CheckResult(spec, probe.protocol_name)
    begin = time.perf_counter()
    serial = scheduler is None and (jobs <= 1 or len(seeds) <= CHUNK)
    if not serial:
        _check_picklable(spec)
    size = 1 if serial else max(1, min(CHUNK, len(seeds) // (8 * max(jobs, 1))))
    chunks = ordered_map(functools.partial(run_chunk, spec, stop_at_first=stop_at_first),
                         _chunks(seeds, size), jobs=1 if serial else jobs,
                         scheduler=scheduler, error=CheckerError)
    try:
        for chunk in chunks:
            result.add(chunk, on_finding)
            if progress is not None:
                progress(chunk.interleavings)
            if _stops(spec, chunk.findings, stop_at_first):
                break
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        with no_sigint():
            chunks.close()             # the workers still busy are stopped
    result.seconds = time.perf_counter() - begin
    return result


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


@dataclass
class AblationResult:
    """A protocol checked as written and with each step removed in turn."""

    spec: CheckSpec
    protocol: str
    seeds: int
    rows: list[AblationRow]         # the protocol as written first
    interrupted: bool               # Ctrl-C cut it short

    @property
    def ok(self) -> bool:
        """The protocol as written is clean over every seed, and every step it
        takes is needed: without it some interleaving breaks."""
        base, removed = self.rows[0], self.rows[1:]
        return (not self.interrupted and base.seeds_run == self.seeds and not base.caught
                and all(r.caught for r in removed))

    def to_json(self) -> dict:
        spec = self.spec
        return {"arch": spec.arch, **({"set": dict(spec.overrides)} if spec.overrides else {}),
                "protocol": self.protocol, "cpus": spec.cpus, "sites": list(spec.sites),
                "seeds": self.seeds, "interrupted": self.interrupted, "ok": self.ok,
                "rows": [r.to_json() for r in self.rows]}


def ablate(spec: CheckSpec, seeds: range, **kw: object) -> AblationResult:
    """Check ``spec``'s protocol as written, then with each step removed in turn.

    Each variant runs until its first finding (at most ``seeds``); the
    protocol as written runs all of ``seeds``.
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
            break
    return AblationResult(spec, _cached(spec).protocol_name, len(seeds), rows, result.interrupted)

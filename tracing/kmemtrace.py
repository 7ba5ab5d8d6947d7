"""The kmemtrace report, from a CTF trace of the slab tracepoints.

What kmemtrace-report printed (kmemtrace patch, Documentation/vm/
kmemtrace.txt) and what ``perf kmem stat --caller`` prints today
(tools/perf/builtin-kmem.c): per call site the bytes allocated and
requested (totals and per hit), the hits, the cross-CPU frees ("ping-pong":
freed on another CPU than the one that allocated) and the internal
fragmentation ``100 - 100 * requested / allocated``; then the totals; then
the errors kmemtrace was meant to catch:

- ``slab-free-of-kmalloc``: kmem_cache_free() on memory from kmalloc();
- ``kfree-of-cache-object``: kfree() on memory from kmem_cache_alloc();
- ``double-free``: a free of a pointer already freed;
- ``unknown-free``: a free of a pointer never allocated in the trace;
- ``alloc-less-than-requested``: bytes_alloc < bytes_req;

and the allocations still live at the end of the trace (never freed).

Call sites and the CPU of each free come from the events themselves (the
CPU is the stream's), so a trace from any arch reads on any host. Frees
are attributed to the allocating call site, as perf does for ping-pong.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tracing.ctfread import CtfTrace
from tracing.errors import TraceError

ALLOCS = {"kmem_kmalloc": "kmalloc", "kmem_cache_alloc": "cache",
          "kmalloc": "kmalloc", "kmem_cache_alloc_node": "cache", "kmalloc_node": "kmalloc"}
FREES = {"kmem_kfree": "kmalloc", "kmem_cache_free": "cache", "kfree": "kmalloc"}
ERROR_KINDS = ("slab-free-of-kmalloc", "kfree-of-cache-object", "double-free", "unknown-free",
               "alloc-less-than-requested")


@dataclass
class Site:
    call_site: int
    hits: int = 0
    bytes_alloc: int = 0
    bytes_req: int = 0
    pingpong: int = 0

    @property
    def frag(self) -> float:
        return 100.0 - 100.0 * self.bytes_req / self.bytes_alloc if self.bytes_alloc else 0.0

    def to_json(self) -> dict:
        return {"call_site": self.call_site, "hits": self.hits,
                "bytes_alloc": self.bytes_alloc, "bytes_req": self.bytes_req,
                "alloc_per_hit": self.bytes_alloc // self.hits if self.hits else 0,
                "req_per_hit": self.bytes_req // self.hits if self.hits else 0,
                "pingpong": self.pingpong, "frag_percent": round(self.frag, 3)}


@dataclass
class KmemError:
    kind: str
    timestamp: int
    cpu: int
    call_site: int
    ptr: int
    detail: str

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class _Live:
    kind: str
    cpu: int
    site: int
    bytes_alloc: int
    timestamp: int


@dataclass
class KmemReport:
    sites: dict[int, Site] = field(default_factory=dict)
    errors: list[KmemError] = field(default_factory=list)
    leaks: list[tuple[int, _Live]] = field(default_factory=list)
    allocs: int = 0
    frees: int = 0
    failed: int = 0                 # allocations that returned NULL: left out
    cross_cpu: int = 0
    discarded: int = 0
    lost_packets: int = 0
    arch: str = ""

    @property
    def bytes_alloc(self) -> int:
        return sum(s.bytes_alloc for s in self.sites.values())

    @property
    def bytes_req(self) -> int:
        return sum(s.bytes_req for s in self.sites.values())

    def sorted_sites(self) -> list[Site]:
        """perf kmem's default order: frag, then hits, then bytes (largest first)."""
        return sorted(self.sites.values(),
                      key=lambda s: (-round(s.frag, 6), -s.hits, -s.bytes_alloc, s.call_site))

    def error_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(ERROR_KINDS, 0)
        for e in self.errors:
            counts[e.kind] += 1
        return counts

    def to_json(self) -> dict:
        wasted = self.bytes_alloc - self.bytes_req
        return {
            "arch": self.arch,
            "sites": [s.to_json() for s in self.sorted_sites()],
            "total": {"bytes_req": self.bytes_req, "bytes_alloc": self.bytes_alloc,
                      "bytes_wasted": wasted,
                      "frag_percent": round(100.0 * wasted / self.bytes_alloc, 3)
                      if self.bytes_alloc else 0.0,
                      "allocs": self.allocs, "frees": self.frees,
                      "failed_allocs": self.failed, "cross_cpu_frees": self.cross_cpu},
            "errors": [e.to_json() for e in self.errors],
            "error_counts": self.error_counts(),
            "never_freed": [{"ptr": ptr, "call_site": lv.site, "cpu": lv.cpu,
                             "bytes_alloc": lv.bytes_alloc, "kind": lv.kind,
                             "timestamp": lv.timestamp} for ptr, lv in self.leaks],
            "events_discarded": self.discarded,
            "lost_packets": self.lost_packets,
        }


#: The integer fields the report reads from each allocation and free event
#: (include/trace/events/kmem.h: kmem_alloc and kmem_free).
ALLOC_FIELDS = ("call_site", "ptr", "bytes_req", "bytes_alloc")
FREE_FIELDS = ("call_site", "ptr")


def _check_fields(trace: CtfTrace) -> None:
    """Refuse a trace whose slab events lack an integer field the report reads."""
    for cls in trace.meta.classes.values():
        needed = ALLOC_FIELDS if cls.name in ALLOCS else FREE_FIELDS if cls.name in FREES \
            else ()
        types = dict(cls.fields)
        for name in needed:
            if name not in types or types[name].kind == "string":
                raise TraceError(f"{trace.dir}: event {cls.name} has no integer field "
                                 f"{name} (the report needs {', '.join(needed)})")


def analyze(trace_dir: str | Path) -> KmemReport:
    """Read a CTF trace once, streaming, and build the report."""
    trace = CtfTrace(trace_dir)
    names = {cls.name for cls in trace.meta.classes.values()}
    # a kisim trace declares every event class; its env says which it recorded
    recorded = trace.meta.env.get("kisim_probes")
    if not names & set(ALLOCS) or (recorded is not None
                                   and not set(recorded.split(",")) & set(ALLOCS)):
        raise TraceError(f"{trace_dir}: no slab allocation events in this trace "
                         "(record with --probes kmem)")
    _check_fields(trace)
    report = KmemReport(arch=trace.meta.env.get("architecture", "?"))
    live: dict[int, _Live] = {}
    freed: dict[int, int] = {}                 # ptr -> call site of the last free
    for ev in trace.events():
        f = ev.fields
        if ev.name in ALLOCS:
            kind = ALLOCS[ev.name]
            ptr, site = f["ptr"], f["call_site"]
            req, alloc = f["bytes_req"], f["bytes_alloc"]
            if not ptr:                 # the RFC's probe ignores it: no memory was given
                report.failed += 1
                continue
            report.allocs += 1
            s = report.sites.get(site) or report.sites.setdefault(site, Site(site))
            s.hits += 1
            s.bytes_alloc += alloc
            s.bytes_req += req
            if alloc < req:
                report.errors.append(KmemError("alloc-less-than-requested", ev.timestamp,
                                               ev.cpu, site, ptr,
                                               f"requested {req} bytes, got {alloc}"))
            live[ptr] = _Live(kind, ev.cpu, site, alloc, ev.timestamp)
            freed.pop(ptr, None)
        elif ev.name in FREES:
            kind = FREES[ev.name]
            ptr, site = f["ptr"], f["call_site"]
            report.frees += 1
            owner = live.pop(ptr, None)
            if owner is None:
                if ptr in freed:
                    report.errors.append(KmemError("double-free", ev.timestamp, ev.cpu, site,
                                                   ptr, f"already freed at {freed[ptr]:#x}"))
                else:
                    report.errors.append(KmemError("unknown-free", ev.timestamp, ev.cpu, site,
                                                   ptr, "never allocated in this trace"))
                continue
            freed[ptr] = site
            if owner.kind != kind:
                which = ("slab-free-of-kmalloc" if kind == "cache" else "kfree-of-cache-object")
                report.errors.append(KmemError(
                    which, ev.timestamp, ev.cpu, site, ptr,
                    f"allocated by {'kmalloc' if owner.kind == 'kmalloc' else 'kmem_cache_alloc'}"
                    f" at {owner.site:#x}"))
            if owner.cpu != ev.cpu:
                report.cross_cpu += 1
                report.sites[owner.site].pingpong += 1
    report.leaks = sorted(live.items(), key=lambda kv: (kv[1].timestamp, kv[0]))
    report.discarded = sum(trace.discarded().values())
    report.lost_packets = sum(trace.lost.values())
    return report


def format_report(report: KmemReport, limit: int | None = None) -> str:
    """The report as text: perf kmem stat --caller's table, summary, errors, leaks."""
    lines = ["-" * 99,
             f" {'Callsite':<34} | {'Total_alloc/Per':<15} | {'Total_req/Per':<15} | "
             f"{'Hit':>8} | {'Ping-pong':>9} | {'Frag':>7}",
             "-" * 99]
    for s in report.sorted_sites()[:limit]:
        per_a = s.bytes_alloc // s.hits if s.hits else 0
        per_r = s.bytes_req // s.hits if s.hits else 0
        lines.append(f" {s.call_site:<#34x} | {s.bytes_alloc:>9}/{per_a:<5} | "
                     f"{s.bytes_req:>9}/{per_r:<5} | {s.hits:>8} | {s.pingpong:>9} | "
                     f"{s.frag:>6.3f}%")
    wasted = report.bytes_alloc - report.bytes_req
    frag = 100.0 * wasted / report.bytes_alloc if report.bytes_alloc else 0.0
    lines += ["-" * 99, "", "SUMMARY (kisim SLAB allocator)", "=" * 30,
              f"Total bytes requested: {report.bytes_req:,}",
              f"Total bytes allocated: {report.bytes_alloc:,}",
              f"Total bytes wasted on internal fragmentation: {wasted:,}",
              f"Internal fragmentation: {frag:f}%",
              f"Cross CPU frees: {report.cross_cpu}/{report.frees}"]
    if report.failed:
        lines.append(f"Failed allocations (NULL, left out): {report.failed:,}")
    if report.discarded or report.lost_packets:
        lines.append(f"WARNING: {report.discarded} events discarded and "
                     f"{report.lost_packets} packets lost while tracing: "
                     "frees and allocations may be missing")
    lines += ["", f"ERRORS: {len(report.errors)}"]
    for e in report.errors:
        lines.append(f"  {e.kind:<26} ptr {e.ptr:#x} at {e.call_site:#x} cpu {e.cpu} "
                     f"t={e.timestamp} ns: {e.detail}")
    leaked = sum(lv.bytes_alloc for _, lv in report.leaks)
    lines += ["", f"NEVER FREED: {len(report.leaks)} allocations, {leaked:,} bytes"]
    for ptr, lv in report.leaks[:limit]:
        lines.append(f"  ptr {ptr:#x} {lv.bytes_alloc:>6} bytes from {lv.site:#x} "
                     f"({lv.kind}) cpu {lv.cpu}")
    return "\n".join(lines)


__all__ = ["ERROR_KINDS", "KmemError", "KmemReport", "Site", "analyze", "format_report"]

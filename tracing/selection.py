"""What ``trace-cmd record``'s ``-e SPEC [-f FILTER]`` flags enable (trace-cmd 3.1.6).

``-e`` takes ``SYSTEM``, ``SYSTEM:EVENT``, ``EVENT`` or ``all``, with globs
(:func:`tracing.tracedat.match_event`), and repeats; a ``-f`` filters the
``-e`` before it. As trace-cmd's ``expand_event`` does, a filter after a spec
without ``:`` is written to each matching system's ``events/SYSTEM/filter``
(which v5.10 applies as ``process_system_preds``), and after ``SYSTEM:EVENT``
or an event's name to each event's own file. ``-e markers`` records every
marker hit (the ``marker`` event), ``-e markers:NAME`` only the markers called
NAME. A spec no built-in event matches names kprobe events, which are known
only once their definitions are registered (:func:`kprobe_filters`).
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any, Sequence

from arches import Arch
from tracing.errors import TraceError
from tracing.events import event_classes
from tracing.tracedat import marker_spec, match_event, select_events, tracefs_name

#: One ``-e SPEC`` and the ``-f FILTER`` after it (None: none).
Spec = tuple[str, "str | None"]


@dataclass(frozen=True)
class Selection:
    """The built-in events to record, the filters to write (by event or system
    name, in order), the specs left for kprobe events, and the marker names asked
    for (empty: every marker)."""

    probes: tuple[str, ...]
    filters: tuple[tuple[str, str], ...]
    kprobe_specs: tuple[Spec, ...]
    markers: tuple[str, ...]


def select(arch: Arch, specs: Sequence[Spec], kprobe_events: bool) -> Selection:
    """What ``specs`` enable on ``arch``'s events; ``kprobe_events``: kprobe events
    are defined, so a spec matching no built-in event may name one of them."""
    classes = event_classes(arch).values()
    system_of = {c.name: tracefs_name(c)[0] for c in classes}
    names: list[str] = []
    filters: list[tuple[str, str]] = []
    later: list[Spec] = []
    for spec, expr in specs:
        found = ["marker"] if marker_spec(spec) else select_events(spec, classes)
        if expr is not None and "marker" in found:
            raise TraceError(f"-e {spec} -f: kisim filters tracepoint and kprobe events, "
                             "not markers")
        if not found:
            later.append((spec, expr))
        names += [n for n in found if n not in names]
        if expr is not None:
            systems = _systems(spec, found, system_of)
            filters += [(system, expr) for system in systems]
            filters += [(n, expr) for n in found if system_of[n] not in systems]
    if later and not kprobe_events:
        known = ", ".join(":".join(tracefs_name(c)) for c in classes
                          if tracefs_name(c)[0] != "ftrace")
        raise TraceError(f"-e {later[0][0]}: no such event (events: {known})")
    return Selection(tuple(names), tuple(filters), tuple(later), _markers(specs, classes))


def _systems(spec: str, found: list[str], system_of: dict[str, str]) -> list[str]:
    """The systems whose filter ``-e SPEC -f`` writes: ``events/SYSTEM/filter``
    for a spec without ``:`` (globs; ``all``: every system), none for
    ``SYSTEM:EVENT`` or an event's name (each event's own file)."""
    if ":" in spec:
        return []
    glob = "*" if spec == "all" else spec
    return list(dict.fromkeys(system_of[n] for n in found
                              if fnmatch.fnmatchcase(system_of[n], glob)))


def _markers(specs: Sequence[Spec], classes: Any) -> tuple[str, ...]:
    """The marker names ``-e markers:NAME`` asks for; empty (every marker) when
    there is none, or when another ``-e`` enables the whole ``marker`` event."""
    names = [marker_spec(spec) for spec, _ in specs]
    if any(name is None and "marker" in select_events(spec, classes)
           for name, (spec, _) in zip(names, specs)):
        return ()
    return tuple(name for name in names if name is not None)


def kprobe_filters(specs: Sequence[Spec], events: Any) -> tuple[tuple[str, str], ...]:
    """The filters of the specs naming kprobe events (``GROUP:EVENT``, globs) among
    ``events`` (:class:`probes.trace_kprobe.TraceKprobes`, or None): every kprobe
    event is recorded; a spec matching none is refused."""
    defined = events.events if events else ()
    filters = []
    for spec, expr in specs:
        found = [f"{g}/{e}" for g, e in defined if match_event(spec, g, e)]
        if not found:
            known = ", ".join(f"{g}:{e}" for g, e in defined)
            raise TraceError(f"-e {spec}: no such event (kprobe events: {known or 'none'})")
        filters += [(name, expr) for name in found if expr is not None]
    return tuple(filters)


def subbufs_for(kb: int, subbuf_size: int) -> int:
    """``-b KB``, the buffer per CPU in KiB, as sub-buffers of ``subbuf_size`` bytes:
    enough to hold it, and at least the two a ring needs."""
    return max(2, -(-kb * 1024 // subbuf_size))


__all__ = ["Selection", "Spec", "kprobe_filters", "select", "subbufs_for"]

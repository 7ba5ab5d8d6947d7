"""A filter written to a whole system (``events/<sys>/filter``), as Linux v5.10 applies it.

kernel/trace/trace_events_filter.c: apply_subsystem_event_filter ->
create_system_filter -> process_system_preds compiles the filter for each event
of the system; where it parses, the event is filtered (event_set_filtered_flag),
where it does not, filter_disable clears the event's FILTERED flag and the event
records unfiltered. trace-cmd's ``record -e SYSTEM -f FILTER`` writes that file
(expand_event -> expand_event_files).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from arches import get_arch
from kbuild import build
from kisim.cli import main
from sim.guest import Guest
from tracing.events import GROUPS, event_classes, parse_probes
from tracing.filter import filter_fields, system_filter
from tracing.selection import select
from tracing.session import EventList, TraceOptions, TraceSession

KMEM = GROUPS["kmem"]          # kmalloc, kmem_cache_alloc: bytes_req; kfree, kmem_cache_free: not


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)            # kisim record's -o defaults to ./trace.dat


def _kmem_fields() -> dict:
    classes = event_classes(get_arch("x86_64"))
    return {name: filter_fields(classes[name]) for name in KMEM}


def test_a_system_filter_is_set_where_it_parses_and_disabled_elsewhere() -> None:
    """process_system_preds: a predicate for the events with the field, an error
    (filter_disable: unfiltered) for the others, and no refusal even where it
    parses on none (its loop clears ``fail`` on every event)."""
    compiled, failed = system_filter("bytes_req > 64", _kmem_fields())
    assert list(compiled) == ["kmem_kmalloc", "kmem_cache_alloc"]
    assert list(failed) == ["kmem_kfree", "kmem_cache_free"]
    assert "Field not found" in str(failed["kmem_kfree"])
    assert compiled["kmem_kmalloc"]({"bytes_req": 65}) and \
        not compiled["kmem_kmalloc"]({"bytes_req": 64})
    compiled, failed = system_filter("nosuch > 1", _kmem_fields())
    assert compiled == {} and list(failed) == list(KMEM)


def test_record_minus_e_system_writes_the_system_filter() -> None:
    """trace-cmd's expand_event: ``-e kmem -f`` (and ``all``, globs) is events/kmem/filter;
    ``-e kmem:kmalloc``, ``-e kmem:*`` and ``-e kmalloc`` write each event's own file."""
    def filters(*events: str) -> tuple:
        return select(get_arch("x86_64"), [(e, "bytes_req > 64") for e in events],
                      kprobe_events=False).filters
    assert filters("kmem") == filters("k*") == (("kmem", "bytes_req > 64"),)
    assert filters("kmem:kmalloc") == filters("kmalloc") == (("kmem_kmalloc", "bytes_req > 64"),)
    assert [name for name, _ in filters("kmem:*")] == list(KMEM)


@pytest.mark.slow
def test_a_system_filter_filters_the_events_it_parses_on_the_others_record_all() -> None:
    """``kmem:bytes_req > 64`` on a run: kmalloc and kmem_cache_alloc keep only
    their calls over 64 bytes, kfree and kmem_cache_free record every call (as
    the same run unfiltered shows)."""
    def run(filters: tuple) -> tuple[list, dict]:
        guest = Guest(build("x86_64"), cpus=1, workload="kmalloc", size=30)
        session = TraceSession(guest, TraceOptions(parse_probes("kmem"), filters=filters))
        sink = EventList()
        return sink.events, session.run(sink).filtered
    plain, _ = run(())
    events, filtered = run((("kmem", "bytes_req > 64"),))
    for name in KMEM:
        want = [e.fields for e in plain if e.name == name]
        got = [e.fields for e in events if e.name == name]
        if name in ("kmem_kfree", "kmem_cache_free"):
            assert got == want and want and name not in filtered
        else:
            assert got == [f for f in want if f["bytes_req"] > 64]
            assert 0 < filtered[name] == len(want) - len(got)


@pytest.mark.slow
def test_record_e_system_f_records_unfiltered_where_it_does_not_parse(capsys) -> None:
    assert main(["record", "--arch", "x86_64", "-e", "kmem", "-f", "bytes_req > 64",
                 "--json", "--size", "10", "kmalloc"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["filters"] == ["kmem:bytes_req > 64"]
    assert set(data["filtered"]) == {"kmem_kmalloc", "kmem_cache_alloc"}


@pytest.mark.slow
def test_a_system_filter_that_parses_on_no_event_is_taken_with_a_warning(capsys) -> None:
    """As v5.10 takes the write: every kmem event records unfiltered, and what it
    put in error_log is one warning line naming the system and the events."""
    assert main(["record", "--arch", "x86_64", "-e", "kmem", "-f", "nosuch > 1",
                 "--json", "--size", "1", "kmalloc"]) == 0
    out, err = capsys.readouterr()
    assert err == ("kisim: warning: events/kmem/filter: 'nosuch > 1' does not parse on "
                   "kmem_kmalloc, kmem_cache_alloc, kmem_kfree, kmem_cache_free (event filter "
                   "parse error: error: Field not found), which record unfiltered "
                   "(process_system_preds)\n")
    assert json.loads(out)["filtered"] == {}

"""The kmemtrace report: planted errors are found, a clean run has none.

Traces are recorded from the guest (probes ``kmem``) on every arch; the
report reads them back through kisim's CTF reader, as it would a trace
copied from another machine.
"""
from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arches import Arch
from kbuild import build
from sim.guest import Guest
from tracing.ctf import CtfWriter, TraceInfo
from tracing.events import parse_probes
from tracing.kmemtrace import ERROR_KINDS, analyze
from tracing.session import TraceOptions, TraceSession


def record(arch: Arch, out: Path, workload: str, cpus: int = 2, size: int | None = None,
           modules: tuple[Path, ...] = (), **opts) -> int | None:
    """Record ``workload`` with the kmem probes into ``out``; its checksum."""
    guest = Guest(build(arch.name, modules=modules), cpus=cpus, workload=workload, size=size)
    session = TraceSession(guest, TraceOptions(parse_probes("kmem"), **opts))
    with CtfWriter(out, TraceInfo(arch.endian, uuid.UUID(int=9), arch.name),
                   session.classes) as writer:
        assert session.run(writer).checksum_ok
    return guest.checksum


EXHAUST = r"""
#include <linux/module.h>
#include <linux/slab.h>

/* kmalloc until it has failed `size` times: how many succeeded, << 16, | failures */
unsigned long exhaust_run(unsigned long size)
{
	unsigned long got = 0, failed = 0;

	while (failed < size && got < 4096) {
		if (kmalloc(4096, GFP_KERNEL))
			got++;
		else
			failed++;
	}
	return got << 16 | failed;
}
"""


@pytest.mark.slow
def test_failed_allocations_are_left_out(tmp_path: Path, arch: Arch) -> None:
    """A kmalloc that returns NULL gave no memory: not a hit, no bytes, no leak at 0
    (the 2008 patch's probe ignores it); the report counts it apart."""
    module = tmp_path / "exhaust.c"
    module.write_text(EXHAUST)
    checksum = record(arch, tmp_path / "t", "exhaust:exhaust_run", cpus=1, size=40,
                      modules=(module,))
    got, failed = checksum >> 16, checksum & 0xFFFF
    report = analyze(tmp_path / "t")
    assert failed == 40 and report.failed == failed
    assert all(ptr for ptr, _ in report.leaks) and len(report.leaks) >= got
    assert report.allocs == sum(s.hits for s in report.sites.values())


@pytest.mark.slow
def test_planted_errors_are_each_found_once(tmp_path: Path, arch: Arch) -> None:
    record(arch, tmp_path / "t", "kmem_errors")
    report = analyze(tmp_path / "t")
    assert report.error_counts() == dict.fromkeys(ERROR_KINDS, 1)
    by_kind = {e.kind: e for e in report.errors}
    assert "requested 100 bytes, got 64" in by_kind["alloc-less-than-requested"].detail
    # the double free is the second free of one pointer; the unknown one is inside an object
    assert by_kind["unknown-free"].ptr - 8 in {ptr for ptr, _ in report.leaks}
    assert sorted(lv.bytes_alloc for _, lv in report.leaks) == [48, 128]


@pytest.mark.slow
def test_clean_hackbench_has_no_errors(tmp_path: Path, arch: Arch) -> None:
    record(arch, tmp_path / "t", "hackbench", cpus=4, size=10)
    report = analyze(tmp_path / "t")
    assert report.errors == []
    assert report.allocs > 100 and report.frees > 100
    assert report.cross_cpu > 0          # hackbench messages are freed by the receiver


@pytest.mark.slow
def test_fragmentation_and_sites_add_up(tmp_path: Path, arch: Arch) -> None:
    record(arch, tmp_path / "t", "kmalloc", size=200)
    report = analyze(tmp_path / "t")
    assert report.errors == [] and report.leaks == []
    assert sum(s.hits for s in report.sites.values()) == report.allocs == report.frees
    assert report.bytes_alloc > report.bytes_req
    top = report.sorted_sites()[0]
    assert top.frag == 100.0 - 100.0 * top.bytes_req / top.bytes_alloc


@pytest.mark.slow
def test_pressure_is_reported_in_the_report(tmp_path: Path, arch: Arch) -> None:
    record(arch, tmp_path / "t", "kmalloc", size=200, subbuf_size=512, subbufs=2,
           drain_every=300)
    report = analyze(tmp_path / "t")
    assert report.discarded > 0


@pytest.mark.slow
def test_overwritten_packets_are_reported(tmp_path: Path, arch: Arch) -> None:
    record(arch, tmp_path / "t", "kmalloc", size=200, subbuf_size=512, subbufs=2,
           mode="overwrite", drain_every=300)
    report = analyze(tmp_path / "t")
    assert report.lost_packets > 0 and report.discarded == 0


@pytest.mark.slow
def test_cli_json_and_text(tmp_path: Path, arch: Arch) -> None:
    record(arch, tmp_path / "t", "kmem_errors")
    proc = subprocess.run([sys.executable, "-m", "kisim", "kmemtrace", "report", "--json",
                           str(tmp_path / "t")], capture_output=True, text=True, check=True)
    data = json.loads(proc.stdout)
    assert data["error_counts"] == dict.fromkeys(ERROR_KINDS, 1)
    assert data["arch"] == arch.name
    text = subprocess.run([sys.executable, "-m", "kisim", "kmemtrace", "report",
                           str(tmp_path / "t")], capture_output=True, text=True, check=True)
    assert "ERRORS: 5" in text.stdout and "double-free" in text.stdout


@pytest.mark.slow
@pytest.mark.parametrize("args", [["kmemtrace", "report", "/nonexistent/trace"],
                                  ["kmemtrace", "report", "--limit", "0", "."]])
def test_cli_bad_input_is_one_line(args: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "kisim", *args], capture_output=True,
                          text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1

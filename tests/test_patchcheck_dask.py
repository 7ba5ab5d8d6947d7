"""The same sweep on a Dask distributed cluster gives the serial result."""
from __future__ import annotations

import pytest

from arches import NAMES
from patchcheck.sweep import CheckSpec, sweep

distributed = pytest.importorskip("distributed", reason="the kisim[dask] extra is not installed")


@pytest.fixture(scope="module")
def scheduler():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_dask_local_cluster_gives_the_serial_result(name, scheduler) -> None:
    spec = CheckSpec(name, 2, naive=True)
    serial = sweep(spec, range(300), jobs=1).to_json()
    remote = sweep(spec, range(300), scheduler=scheduler).to_json()
    serial.pop("seconds"), remote.pop("seconds")
    assert serial["findings_total"] and remote == serial


@pytest.mark.slow
def test_dask_runs_an_ablated_protocol_to_its_first_finding(scheduler) -> None:
    spec = CheckSpec("x86_64", 2, without="middle sync")
    serial = sweep(spec, range(1000), stop_at_first=True)
    remote = sweep(spec, range(1000), scheduler=scheduler, stop_at_first=True)
    assert remote.first_seed() == serial.first_seed() is not None
    assert remote.findings == serial.findings

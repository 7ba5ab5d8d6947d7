"""Worker processes and Dask for kisim's sweeps: bounded, in order, dying with their parent.

One home for what every sweep needs (the patch checker's seeds,
``kisim compare`` and ``kisim validate`` over layouts): at most
:data:`JOBS_PER_CPU` processes per available CPU, each ignoring Ctrl-C and
killed with its parent (``prctl(PR_SET_PDEATHSIG)``, kernel/sys.c); results
consumed in submission order, so any number of workers, or a Dask cluster,
gives exactly the serial result.

Usage::

    for result in ordered_map(task, items, jobs=2):
        ...
"""
from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import threading
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, TypeVar

if TYPE_CHECKING:                       # the optional kisim[dask] extra
    from distributed import Client

JOBS_PER_CPU = 4           # the most worker processes per available CPU
CONNECT_TIMEOUT = 3        # seconds to reach a Dask scheduler
PR_SET_PDEATHSIG = 1       # prctl(2) option, include/uapi/linux/prctl.h

T = TypeVar("T")
R = TypeVar("R")


def max_jobs() -> int:
    """The most worker processes a sweep starts: :data:`JOBS_PER_CPU` per available CPU."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)
    return JOBS_PER_CPU * cpus


def worker_init() -> None:
    """A worker ignores Ctrl-C (the parent stops it) and dies with its parent,
    even a parent killed by SIGKILL: prctl(PR_SET_PDEATHSIG, SIGKILL)
    (kernel/sys.c). Where prctl is missing the parent's kill still stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:               # the parent died before prctl took effect
        os._exit(1)


def process_pool(jobs: int) -> ProcessPoolExecutor:
    """``jobs`` forked workers set up by :func:`worker_init`."""
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                               initializer=worker_init)


def stop_workers(executor: ProcessPoolExecutor) -> None:
    """Kill every worker now and reap it (a worker may be deep in a user's loop)."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    for proc in processes:
        with contextlib.suppress(OSError, ValueError):
            proc.kill()
    executor.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            proc.join(timeout=1)


@contextlib.contextmanager
def no_sigint() -> Iterator[None]:
    """Ignore Ctrl-C while workers are stopped, so a second one cannot cut it short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def in_order(submit: Callable[[T], Future], items: Iterable[T], window: int, *,
             cancel: bool = True) -> Iterator[Any]:
    """Submit items with at most ``window`` in flight; yield results in submission order.
    Closed early, it cancels those still in flight, unless ``cancel`` is false."""
    items = iter(items)
    flight: deque[Future] = deque()
    try:
        for item in items:
            flight.append(submit(item))
            if len(flight) >= window:
                yield flight.popleft().result()
        while flight:
            yield flight.popleft().result()
    finally:
        for fut in flight if cancel else ():
            fut.cancel()


def dask_client(address: str, error: type[Exception]) -> Client:
    """A Dask distributed client for ``address`` (the optional ``kisim[dask]`` extra);
    ``error`` (one line) when Dask is missing or the scheduler cannot be reached."""
    try:
        from distributed import Client
    except ImportError:
        raise error("--scheduler needs Dask: pip install 'kisim[dask]'") from None
    made: list[Client | BaseException] = []

    def connect() -> None:
        try:
            made.append(Client(address, timeout=CONNECT_TIMEOUT))
        except BaseException as err:    # handed to the caller's thread
            made.append(err)

    # Client's timeout bounds the TCP connect, not Dask's handshake: a port that
    # accepts and never answers holds it for ever. A daemon thread dies with us.
    thread = threading.Thread(target=connect, name="kisim-dask-connect", daemon=True)
    thread.start()
    thread.join(2 * CONNECT_TIMEOUT)
    if not made:
        raise error(f"--scheduler {address}: no answer within {2 * CONNECT_TIMEOUT} s "
                    "(is a Dask scheduler listening there?)")
    if isinstance(made[0], (OSError, TimeoutError, ValueError)):
        raise error(f"--scheduler {address}: cannot connect: {made[0]}") from None
    if isinstance(made[0], Exception):  # tls:// without a context, a service that is not Dask
        raise error(f"--scheduler {address}: not a Dask scheduler kisim can use "
                    f"({type(made[0]).__name__}: {str(made[0])[:200]})") from None
    if isinstance(made[0], BaseException):
        raise made[0]
    return made[0]


def ordered_map(task: Callable[[T], R], items: Iterable[T], *, jobs: int = 1,
                scheduler: str | None = None,
                error: type[Exception] = RuntimeError) -> Iterator[R]:
    """``task(item)`` for each item, in order: here (``jobs`` 1), in ``jobs`` worker
    processes, or on the Dask scheduler at ``scheduler``. ``task`` and the items
    must pickle for workers; at most ``4 * jobs`` (or 4 per Dask worker) are in
    flight. On any exception or Ctrl-C the workers are killed before it propagates;
    closing the iterator early kills them too."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= max_jobs():
        raise error(f"jobs {jobs!r}: 1..{max_jobs()} ({JOBS_PER_CPU} per available CPU)")
    if scheduler is None and jobs == 1:
        for item in items:
            yield task(item)
        return
    executor: ProcessPoolExecutor | None = None
    client = None
    results: Iterator[R] | None = None
    completed = False
    try:
        if scheduler is None:
            executor = process_pool(jobs)
            # stop_workers() cancels what has not started, in the pool's own thread: a
            # cancel from here races with that thread marking the future broken once
            # its worker is killed, whose InvalidStateError it prints as a traceback
            # (CPython gh-107219, fixed in 3.12)
            results = in_order(lambda item: executor.submit(task, item), items, 4 * jobs,
                               cancel=False)
        else:
            client = dask_client(scheduler, error)
            workers = max(1, len(client.scheduler_info().get("workers", {})))
            results = in_order(lambda item: client.submit(task, item, pure=False), items,
                               4 * workers)
        yield from results
        completed = True
    finally:
        with no_sigint():
            if results is not None:
                results.close()
            if executor is not None:
                if completed:
                    executor.shutdown(wait=True)
                else:
                    stop_workers(executor)
            if client is not None:
                client.close()


__all__ = ["CONNECT_TIMEOUT", "JOBS_PER_CPU", "PR_SET_PDEATHSIG", "dask_client", "in_order",
           "max_jobs", "no_sigint", "ordered_map", "process_pool", "stop_workers",
           "worker_init"]

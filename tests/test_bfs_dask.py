"""The Dask engine's local cluster (issue 21, workers): its processes run with the quiet settings
(no statistical profiler on the tasks' stacks, slow monitors; work stealing on), ignore
SIGINT (a terminal's Ctrl-C is the command's to handle) and keep the memory blocks they reuse
(issue 43), and each task reports its worker process's CPU and its own thread's."""
import os
import platform
import subprocess
import sys

import pytest

from properties.search.explore import ExploreOptions, explore

distributed = pytest.importorskip("distributed")


def test_the_local_cluster_runs_quietly_and_reports_each_tasks_cpu(python_sigint):
    import dask
    from distributed import Client

    from properties.search.dask_engine import QUIET, local_cluster
    with local_cluster(2) as cluster, Client(cluster) as client:
        settings = client.run(lambda: [dask.config.get(k) for k in sorted(QUIET)])
        assert list(settings.values()) == [[QUIET[k] for k in sorted(QUIET)]] * 2
        import signal
        ignored = client.run(lambda: signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
        assert list(ignored.values()) == [True, True]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # not here
        # work stealing is on: an idle worker takes the queued expansion partitions of a busy one
        assert client.run_on_scheduler(
            lambda dask_scheduler: "stealing" in dask_scheduler.extensions) is True
        # and Dask knows a visited set's size, so that stealing does not move one as if free
        sizes = client.run(_visited_sizes)
        assert list(sizes.values()) == [[80_000, 80_000]] * 2, sizes
        if _GLIBC:
            # started with Dask's MALLOC_TRIM_THRESHOLD_, each worker still reuses a freed
            # 1 MiB block rather than mapping it afresh (dask_setup: steady_allocator)
            faults = client.run(_faults_probe())
            assert all(f < _REUSED for f in faults.values()), faults
        # every socket the cluster listens on, the dashboard's HTTP server's too, is on
        # 127.0.0.1 (Dask's default dashboard address is every interface)
        import os

        import psutil
        me = psutil.Process(os.getpid())
        listening = {(c.laddr.ip, c.laddr.port)
                     for p in [me, *me.children(recursive=True)]
                     for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN}
        http = cluster.scheduler.http_server.port
        assert http in {port for _, port in listening}
        assert {ip for ip, _ in listening} == {"127.0.0.1"}, listening
        report = explore(ExploreOptions(depth=3, reading=None, cluster=cluster.scheduler_address,
                                        parallel_from=1))
    assert report.workers == 2
    assert report.states == explore(ExploreOptions(depth=3, reading=None)).states
    tasks = report.storage["workerTasks"]
    assert [t["level"] for t in tasks] == [0, 1, 2]
    for t in tasks:
        assert len(t["cpuSeconds"]) == len(t["threadCpuSeconds"]) == 2
        assert all(0 <= own <= cpu + 0.01
                   for own, cpu in zip(t["threadCpuSeconds"], t["cpuSeconds"]))


def _visited_sizes() -> list:
    """On a worker: Dask's ``sizeof`` of a visited set of 10,000 fingerprints, and its bytes."""
    import numpy as np
    from dask.sizeof import sizeof

    from properties.search.store import FingerprintSet
    visited = FingerprintSet().with_added(np.arange(1, 10_001, dtype=np.uint64) * 7919)[0]
    return [sizeof(visited), visited.nbytes]


_GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
_BLOCKS = 100
_REUSED = 2500
"""Minor page faults below which the probe shows the blocks reused: one 1 MiB block is 256
pages, and 100 mapped afresh fault some 25,600 (a block under 4 MiB, which numpy would ask the
kernel to back with huge pages)."""

_PROBE = f"""
def faults():
    # minor page faults of this process while it makes and frees a 1 MiB numpy array, every
    # page written, {_BLOCKS} times (after one such array to warm the heap)
    import resource
    import numpy as np
    np.ones(1 << 17)
    start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range({_BLOCKS}):
        block = np.ones(1 << 17)
        del block
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start
"""


def _faults_probe():
    """The probe as a function of no module (so that Dask ships it by value to a worker)."""
    namespace: dict = {}
    exec(_PROBE, namespace)
    return namespace["faults"]


@pytest.mark.skipif(not _GLIBC, reason="mallopt's settings are glibc's (Linux)")
def test_the_steady_allocator_undoes_what_dasks_trim_threshold_costs():
    """Issue 43: a process started with Dask's ``MALLOC_TRIM_THRESHOLD_=65536`` (as a nanny
    starts each worker) maps every block of 128 KiB or more afresh, so a 1 MiB array made and
    freed 100 times faults all its pages each time; after :func:`steady_allocator` (which every
    worker runs as it starts) the block is reused."""
    probe = _PROBE + ("from properties.search.dask_engine import steady_allocator\n"
                      "before = faults(); taken = steady_allocator(); after = faults()\n"
                      "print(before, taken, after)\n")
    env = dict(os.environ, MALLOC_TRIM_THRESHOLD_="65536")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    before, taken, after = out.split()
    assert taken == "True"
    assert int(before) >= _BLOCKS * 250  # each block's 256 pages faulted again
    assert int(after) < _REUSED


def test_the_steady_allocator_changes_nothing_where_mallopt_is_missing_or_refused(monkeypatch):
    """:func:`steady_allocator` returns False, and sets nothing, where the C library has no
    ``mallopt`` (macOS), cannot be opened so (Windows) or refuses the mmap threshold (a 32-bit
    glibc caps it at 512 KiB): the trim threshold is not set alone."""
    import ctypes

    from properties.search.dask_engine import MMAP_THRESHOLD, steady_allocator
    calls = []

    class Refusing:
        def __call__(self, param, value):
            calls.append((param, value))
            return 0 if param == -3 else 1  # M_MMAP_THRESHOLD refused, any other taken

    class Library:
        mallopt = Refusing()

    monkeypatch.setattr(ctypes, "CDLL", lambda name: Library())
    assert steady_allocator() is False
    assert calls == [(-3, MMAP_THRESHOLD)]  # M_TRIM_THRESHOLD (-1) never asked for

    monkeypatch.setattr(ctypes, "CDLL", lambda name: object())  # no mallopt
    assert steady_allocator() is False

    def unopenable(name):
        raise TypeError("no C library by that name")
    monkeypatch.setattr(ctypes, "CDLL", unopenable)
    assert steady_allocator() is False

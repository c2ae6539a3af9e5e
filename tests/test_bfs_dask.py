"""The Dask engine's local cluster (issue 21, workers): its processes run with the quiet settings
(no statistical profiler on the tasks' stacks, slow monitors, no work stealing) and ignore
SIGINT (a terminal's Ctrl-C is the command's to handle), and each task reports its worker
process's CPU and its own thread's."""
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
        assert client.run_on_scheduler(
            lambda dask_scheduler: "stealing" in dask_scheduler.extensions) is False
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

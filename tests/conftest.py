"""Suite-wide collection rules.

``make test`` runs the suite on two xdist workers with ``--dist loadgroup``. A fixture of module
or session scope defined in a test module (a run, a search, a local cluster made once and only
read) would otherwise be made once on each worker that happens to run one of its tests; here
every test that takes such a fixture is put in one xdist group per fixture, so it is made once.
Tests that share a per-process cache instead of a fixture name the group themselves with
``pytest.mark.xdist_group``.

pytest-xdist groups a test by adding ``@group`` to its node id, which pytest 9.2 no longer
reads (pytest-xdist issue 1386): the ``dev`` extra keeps pytest below 9.2, and a worker whose
groups were dropped stops the run (:func:`pytest_collection_finish`) rather than quietly
building every shared fixture twice.
"""
from __future__ import annotations

import os

import pytest


@pytest.fixture
def python_sigint():
    """SIGINT raising KeyboardInterrupt in this process for the test, whatever the suite was
    started with (a shell's background job, ``make test &`` or ``nohup ... &``, starts with
    SIGINT ignored), and the disposition it had put back after."""
    import signal
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def pytest_configure(config):
    """Register the ``xdist_group`` marker, so that the suite runs without pytest-xdist too
    (plain ``pytest``, ``--strict-markers``)."""
    config.addinivalue_line("markers", "xdist_group(name): run these tests on one xdist worker")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook turns the marks into node ids
def pytest_collection_modifyitems(config, items):
    """Mark each test that takes a module- or session-scoped fixture of a test module (directly
    or through another fixture) with ``xdist_group(<module>::<fixture>)``, unless it names its
    group already. Fixtures that one test takes together share a group (the group is named after
    the first of them in name order), so that a fixture another one builds on is made once."""
    parent: dict = {}

    def find(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    taken = []
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)
        shared = [] if info is None else sorted(
            f"{defs[-1].baseid}::{name}" for name, defs in info.name2fixturedefs.items()
            if defs and defs[-1].scope in ("module", "session") and defs[-1].baseid)
        for name in shared:
            parent.setdefault(name, name)
        for name in shared[1:]:
            a, b = find(shared[0]), find(name)
            parent[max(a, b)] = min(a, b)
        if shared:
            taken.append((item, shared[0]))
    for item, name in taken:
        item.add_marker(pytest.mark.xdist_group(find(name)))


def pytest_collection_finish(session):
    """On an xdist worker with ``--dist loadgroup``: say so on standard error and raise
    UsageError if a grouped test's node id lacks its ``@group`` suffix (the groups would be
    ignored; see the module). The run stops, exit code 3."""
    if not session.config.getoption("loadgroup", default=False):
        return
    lost = [item.nodeid for item in session.items
            if item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid]
    if lost:
        said = (f"pytest-xdist did not group {len(lost)} tests (first: {lost[0]}); with pytest "
                f"{pytest.__version__} its --dist loadgroup is ignored: install pytest<9.2 "
                "(make venv does)")
        # xdist's controller reports a worker's UsageError only as an internal error naming a
        # test, so the reason goes to the terminal (a worker's standard error) first
        os.write(2, f"\n{said}\n".encode())
        raise pytest.UsageError(said)

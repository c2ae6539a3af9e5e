"""The suite's own collection rules (``tests/conftest.py``), run on a small suite of their own
with pytest's ``pytester``: on two xdist workers with ``--dist loadgroup`` a module-scoped
fixture is made once, fixtures one test takes together share a group, and a pytest that drops
the groups (pytest-xdist issue 1386) stops the run rather than letting it build every shared
fixture twice."""
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

_CONFTEST = (Path(__file__).parent / "conftest.py").read_text()

_SUITE = '''
import os
import pytest

def _made(what):
    with open(os.environ["MADE_LOG"], "a") as fh:
        fh.write(what + " " + os.environ.get("PYTEST_XDIST_WORKER", "-") + "\\n")

@pytest.fixture(scope="module")
def shared():
    _made("shared")
    return 1

@pytest.fixture(scope="module")
def other():
    _made("other")
    return 2

@pytest.fixture(scope="module")
def alone():
    _made("alone")
    return 3

@pytest.mark.parametrize("i", range(6))
def test_shared(shared, i):
    assert shared == 1

def test_both(shared, other):
    assert (shared, other) == (1, 2)

@pytest.mark.parametrize("i", range(6))
def test_other(other, i):
    assert other == 2

@pytest.mark.parametrize("i", range(6))
def test_alone(alone, i):
    assert alone == 3

@pytest.mark.parametrize("i", range(6))
def test_plain(i):
    assert i < 6
'''

# emulates pytest 9.2, whose node ids no longer carry pytest-xdist's ``@group`` suffix
_DROPS_GROUPS = '''
import pytest

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    for item in items:
        item._nodeid = item._nodeid.split("@")[0]
'''


def _run(pytester, monkeypatch, *plugins):
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(test_suite=_SUITE)
    for i, text in enumerate(plugins):
        pytester.makepyfile(**{f"plugin{i}": text})
    log = pytester.path / "made.log"
    monkeypatch.setenv("MADE_LOG", str(log))
    extra = [a for i in range(len(plugins)) for a in ("-p", f"plugin{i}")]
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "-v",
                                           "-p", "no:cacheprovider", *extra)
    return result, log.read_text().split("\n")[:-1] if log.exists() else []


def test_each_module_fixture_is_made_once_on_two_workers(pytester, monkeypatch):
    result, made = _run(pytester, monkeypatch)
    result.assert_outcomes(passed=25)
    # shared and other, taken together by test_both, are one group; alone is its own
    assert sorted(m.split()[0] for m in made) == ["alone", "other", "shared"]
    workers = {m.split()[0]: m.split()[1] for m in made}
    assert workers["shared"] == workers["other"]
    out = result.stdout.str()
    assert "test_suite.py::test_other[0]@test_suite.py::other" in out or \
        "test_suite.py::test_other[0]@test_suite.py::shared" in out
    assert "test_suite.py::test_alone[5]@test_suite.py::alone" in out
    assert "test_plain[0]@" not in out


def test_a_pytest_that_drops_the_groups_stops_the_run(pytester, monkeypatch):
    result, made = _run(pytester, monkeypatch, _DROPS_GROUPS)
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    said = [line for line in result.stderr.lines if line]
    assert said and set(said) == {
        "pytest-xdist did not group 19 tests (first: test_suite.py::test_shared[0]); with pytest "
        f"{pytest.__version__} its --dist loadgroup is ignored: install pytest<9.2 "
        "(make venv does)"}
    assert made == []  # stopped before any test ran

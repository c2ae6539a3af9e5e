"""The hot modules compiled at install (model/compiled.py, setup.py): the compiled run prints
the same bytes as the pure-Python one, and a build that does not match its source is never
taken (issue 43, item 2)."""
from __future__ import annotations

import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from model import compiled
from model.compiled import COMPILED, STAMP_SUFFIX, source_digest

ROOT = Path(__file__).resolve().parent.parent

_RUN = """
import json, sys
from activity_check.cli import main
from model.compiled import compiled_modules
sys.argv = ["activity-check"] + sys.argv[1:]
code = main()
print(json.dumps(compiled_modules()), file=sys.stderr)
sys.exit(code)
"""


def _explore(pure: bool, *args: str) -> tuple:
    """``(stdout bytes, {module: compiled?})`` of ``activity-check explore ARGS`` in a fresh
    process, pure Python or not."""
    env = dict(os.environ, ACTIVITY_CHECK_PURE="1" if pure else "0")
    proc = subprocess.run([sys.executable, "-c", _RUN, "explore", *args], cwd=ROOT, env=env,
                          capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return proc.stdout, json.loads(proc.stderr.decode().strip().splitlines()[-1])


def _built() -> list:
    """The modules of COMPILED with a compiled build beside a matching source."""
    found = []
    for name in COMPILED:
        spec = importlib.machinery.PathFinder.find_spec(
            name, [str(ROOT / name.rpartition(".")[0].replace(".", "/"))])
        if spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            found.append(name)
    return found


@pytest.mark.parametrize("args", [("--depth", "4", "--workers", "1", "--json"),
                                  ("--depth", "3", "--workers", "1", "--adversarial",
                                   "--reading", "Q8=keep", "--json")])
def test_the_compiled_run_prints_the_pure_python_runs_bytes(args):
    """Every reading at depth 4 (64,148 states) and one reading with the producer's
    non-conformant moves: byte for byte the same report, compiled or not; and each run loaded
    what it says (the compiled modules where built, none under ACTIVITY_CHECK_PURE=1)."""
    built = _built()
    if not built:
        pytest.skip("no compiled build (ACTIVITY_CHECK_PURE_INSTALL=1, or no Cython or C "
                    "compiler at install)")
    fast, loaded = _explore(False, *args)
    slow, loaded_pure = _explore(True, *args)
    assert {n for n, c in loaded.items() if c} == set(built) & set(loaded)
    assert "properties.search.sweep_cache" in loaded and not any(loaded_pure.values())
    assert fast == slow
    assert json.loads(fast)["states"] > 0


def _fake_package(tmp_path: Path, monkeypatch) -> tuple:
    """A package ``fakepkg`` with a module ``hot`` as source and as an extension file (its
    bytes are never loaded: the finders only look at names), guarded as COMPILED's are."""
    package = tmp_path / "fakepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    source = package / "hot.py"
    source.write_text("VALUE = 1\n")
    (package / ("hot" + importlib.machinery.EXTENSION_SUFFIXES[0])).write_bytes(b"\0")
    monkeypatch.setattr(compiled, "COMPILED", ("fakepkg.hot",))
    return package, source


def _loader(package: Path) -> type:
    spec = compiled._GuardFinder().find_spec("fakepkg.hot", [str(package)])
    return type(spec.loader)


def test_a_build_is_taken_only_with_the_stamp_of_its_source(tmp_path, monkeypatch):
    """The extension where its stamp is the source's SHA-256; the source where the stamp is
    missing, stale (the source edited after the build) or pure Python is asked for."""
    monkeypatch.delenv("ACTIVITY_CHECK_PURE", raising=False)
    package, source = _fake_package(tmp_path, monkeypatch)
    extension, pure = importlib.machinery.ExtensionFileLoader, importlib.machinery.SourceFileLoader
    assert _loader(package) is pure  # no stamp
    stamp = package / ("hot" + STAMP_SUFFIX)
    stamp.write_text(source_digest(source) + "\n")
    assert _loader(package) is extension
    monkeypatch.setenv("ACTIVITY_CHECK_PURE", "1")
    assert _loader(package) is pure
    monkeypatch.setenv("ACTIVITY_CHECK_PURE", "0")
    assert _loader(package) is extension
    source.write_text("VALUE = 2\n")  # edited after the build
    assert _loader(package) is pure
    stamp.write_text(source_digest(source))
    assert _loader(package) is extension


def test_modules_outside_the_list_are_left_to_the_importer(tmp_path, monkeypatch):
    package, _ = _fake_package(tmp_path, monkeypatch)
    assert compiled._GuardFinder().find_spec("fakepkg.other", [str(package)]) is None
    assert compiled._FINDER in sys.meta_path  # installed by importing model


def test_the_list_names_modules_that_exist():
    """Every module COMPILED names has its source in the repository (setup.py compiles it)."""
    for name in COMPILED:
        assert (ROOT / (name.replace(".", "/") + ".py")).is_file(), name

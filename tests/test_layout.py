"""The package layout as the design states it (design section 3): data flows one way, so
``model`` imports neither ``properties`` nor ``counterexamples``, ``properties`` does not import
``counterexamples``, nothing below the command line imports ``activity_check``, no search engine
imports the zoo of wrong consumers, and no module of the four packages imports itself back
through others (deferred imports inside functions included: a deferred import still ties two
modules together).

The import graph is read from the source with :mod:`ast` and checked with networkx."""
from __future__ import annotations

import ast
import pathlib

import networkx as nx
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
LAYERED = ("model", "properties", "counterexamples", "activity_check")
FORBIDDEN = {"model": ("properties", "counterexamples", "activity_check"),
             "properties": ("counterexamples", "activity_check"),
             "counterexamples": ("activity_check",), "activity_check": ()}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: pathlib.Path) -> list[tuple[str, int]]:
    """``(imported module name, line)`` for every absolute import in the file, at any depth."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, node.lineno))
            out.extend((f"{node.module}.{a.name}", node.lineno) for a in node.names)
    return out


def _graph() -> tuple[nx.DiGraph, dict[str, pathlib.Path]]:
    modules = {_module_name(p): p for pkg in LAYERED for p in (ROOT / pkg).rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for imported, line in _imports(path):
            if imported in modules and imported != name:
                graph.add_edge(name, imported, line=line)
    return graph, modules


def test_the_graph_is_read():
    graph, modules = _graph()
    assert "model.consumer" in modules and "properties.search.explore" in modules
    assert graph.has_edge("properties.search.explore", "model.consumer")
    assert graph.number_of_edges() > 50


@pytest.mark.parametrize("package", LAYERED)
def test_data_flows_one_way(package):
    bad = []
    for name, path in sorted(_graph()[1].items()):
        if name.split(".")[0] != package:
            continue
        for imported, line in _imports(path):
            if imported.split(".")[0] in FORBIDDEN[package]:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {imported}")
    assert not bad, "\n".join(bad)


def test_no_import_cycle():
    graph, _ = _graph()
    cycles = sorted(sorted(c) for c in nx.simple_cycles(graph))
    assert cycles == [], cycles


def test_the_command_line_is_in_the_graph():
    graph, modules = _graph()
    assert "activity_check.cli" in modules and "activity_check.cmd_peer" in modules
    assert graph.has_edge("activity_check.cmd_peer", "activity_check.cli")


def test_no_engine_imports_a_mutant():
    """The search engines check a consumer through the contract of :mod:`model.consumers`; the
    zoo of wrong consumers is something they are given, never something they import."""
    graph, modules = _graph()
    engines = [m for m in modules if m.startswith("properties.search") or
               m.startswith("properties.smt")]
    assert engines
    bad = sorted(m for m in engines if nx.has_path(graph, m, "properties.zoo"))
    assert bad == [], bad


def test_clause_data_stands_alone():
    """The registry's data module imports nothing of the project (issue 17: the cycle
    ``model.clause_data`` <-> ``model.clauses`` is gone)."""
    imported = {m.split(".")[0] for m, _ in _imports(ROOT / "model" / "clause_data.py")}
    assert imported.isdisjoint({"model", "properties", "counterexamples", "activity_check"})


def test_tests_readme_lists_every_test_file():
    """``tests/README.md`` names every test file and no file that is gone (issue 17)."""
    import re
    listed = set(re.findall(r"`(test_\w+\.py)`", (ROOT / "tests" / "README.md").read_text()))
    present = {p.name for p in (ROOT / "tests").glob("test_*.py")}
    assert listed == present, {"missing": sorted(present - listed),
                               "gone": sorted(listed - present)}


def test_no_function_is_over_150_lines():
    """Issue 17: a function long enough to hide several ideas is split (the one BFS driver of
    issue 21 replaced the last exception, the old sweep)."""
    long = []
    for pkg in LAYERED + ("activity_check",):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > 150:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} {lines}")
    assert not long, long

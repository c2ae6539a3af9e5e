"""The conformance matrix (``counterexamples.peers.matrix``, ``activity-check peer matrix``): the JSON
document, its Markdown and HTML (parsed with the standard library's HTML parser), the output
directory and the command line. Most tests use the peers that need no Node (the reference model
and the Python ag-ui-protocol models); one runs a Node peer and skips without it."""
from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from activity_check.cli import main
import counterexamples.peers.matrix as M
from model.readings import DRAFT, KNOBS

SMALL = {"stateful": 4, "bfs_depth": 2, "max_findings": 3}  # depth 2 reaches SUBAGENT_STARTED


@pytest.fixture(scope="module")
def small():
    """The model and the ag-ui-protocol models over the corpus, the probes and a small search."""
    return M.build_matrix(["model", "ag-ui-protocol"], seed=0, **SMALL)


class Tables(HTMLParser):
    """Every table of a page: ``{table id: {"head": [cell text], "rows": [[(text, class)]]}}``,
    and every link's href."""

    def __init__(self):
        super().__init__()
        self.tables, self.links, self._table, self._row, self._cell = {}, [], None, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(a.get("id"), {"head": [], "rows": []})
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ["", a.get("class"), tag]
        elif tag == "a":
            self.links.append(a.get("href"))

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[0] += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(tuple(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if all(c[2] == "th" for c in self._row):
                self._table["head"] = [c[0] for c in self._row]
            else:
                self._table["rows"].append([(c[0], c[1]) for c in self._row])
            self._row = None
        elif tag == "table":
            self._table = None


def test_matrix_json_lists_peers_knobs_and_divergences(small):
    doc = small.to_json()
    assert [(p["adapter"], p["name"], p["version"]) for p in doc["peers"]] == [
        ("model", "model-draft", "activity-check model (draft)"),
        ("ag-ui-protocol", "ag-ui-protocol", "ag-ui-protocol@1.0.0 (event models as the wire "
                                             "layer)")]
    assert [k["knob"] for k in doc["knobs"]] == [k.id for k in KNOBS]
    cells = {k["knob"]: k["cells"] for k in doc["knobs"]}
    # the model agrees with draft everywhere; the Python models refuse an unknown op (Q20)
    assert doc["peers"][0]["counts"]["divergence"] == 0 and doc["divergences"]["model-draft"] == []
    assert cells["Q20"]["model-draft"]["behavesAs"] == DRAFT.as_dict()["Q20"] == "drop-op"
    assert cells["Q20"]["ag-ui-protocol"] == {"status": "determined", "behavesAs": "fatal",
                                              "options": ["fatal"], "evidence": 2}
    divergences = doc["divergences"]["ag-ui-protocol"]
    branches = {d["branch"] for d in divergences}
    # an unknown event type and a SUBAGENT_STARTED without name are refused
    assert {"unrecognised.drop", "subagent.track"} <= branches
    assert all(d["file"] == f"findings/{d['id']}.json" and d["clauses"] for d in divergences)
    assert doc["search"] == {"stateful": 4, "bfsDepth": 2, "budget": None}
    # the same seed and peers give the same document
    again = M.build_matrix(["ag-ui-protocol"], seed=0, **SMALL).to_json()
    assert again["divergences"]["ag-ui-protocol"] == divergences


def test_matrix_html_holds_the_knob_table(small, tmp_path):
    written = M.write_matrix(str(tmp_path), small)
    assert written[:3] == ["matrix.json", "matrix.md", "matrix.html"]
    page = Tables()
    page.feed((tmp_path / "matrix.html").read_text())
    knobs = page.tables["knobs"]
    # the peers are named as in the peers table and the Markdown
    assert knobs["head"] == ["knob", "question", "draft", "model-draft", "ag-ui-protocol"]
    assert [r[0][0] for r in knobs["rows"]] == [k.id for k in KNOBS]
    doc = json.loads((tmp_path / "matrix.json").read_text())
    for row, knob in zip(knobs["rows"], doc["knobs"]):
        assert row[2][0] == knob["draft"]
        for (text, cls), peer in zip(row[3:], ("model-draft", "ag-ui-protocol")):
            cell = knob["cells"][peer]
            assert text == M.cell_text(cell, knob["knob"])
            assert cls == M._cell_class(cell, knob["draft"])
    q20 = next(r for r in knobs["rows"] if r[0][0] == "Q20")
    # Q20=fatal is a deviation (the snapshots page drops an unknown op, the run survives)
    assert q20[3:] == [("drop-op", "same"),
                       ("fatal (deviation, against SNP-UNKNOWN-OP: not conformant)", "other")]
    peers = page.tables["peers"]
    assert [r[0][0] for r in peers["rows"]] == ["model-draft", "ag-ui-protocol"]
    assert peers["rows"][1][2][0] == "ag-ui-protocol@1.0.0 (event models as the wire layer)"
    # every divergence links its finding, and every finding is written
    assert sorted(page.links) == sorted(d["file"] for d in doc["divergences"]["ag-ui-protocol"])
    assert all((tmp_path / link).is_file() for link in page.links)
    assert sorted(doc["files"]) == sorted(written[3:])
    md = (tmp_path / "matrix.md").read_text()
    assert "| Q20 | drop-op | drop-op | **fatal (deviation, against SNP-UNKNOWN-OP: not " \
        "conformant)** |" in md
    # the peers table counts the traces matched only through a deviation, as not conformant
    head = peers["head"]
    assert head[5:8] == ["reading", "of which deviation", "divergence"]
    for row, p in zip(peers["rows"], doc["peers"]):
        assert int(row[6][0]) == p["counts"]["deviation"] <= p["counts"]["reading"]
    assert doc["peers"][0]["counts"]["deviation"] == 0
    md_peers = [line for line in md.splitlines() if line.startswith("| ag-ui-protocol |")][0]
    n = doc["peers"][1]["counts"]
    assert f"| {n['reading']} | {n['deviation']} | {n['divergence']} |" in md_peers
    # one naming: the Markdown knob table's columns are the page's (less its question column)
    md_head = next(line for line in md.splitlines() if line.startswith("| knob |"))
    assert [c.strip() for c in md_head.strip("|").split("|")] == [
        h for h in knobs["head"] if h != "question"]


def test_matrix_html_escapes_what_a_peer_says():
    doc = {"seed": 0, "search": {"stateful": 0, "bfsDepth": 0}, "skipped": [],
           "peers": [{"adapter": "<b>x</b>", "name": "p", "version": "<script>1</script>",
                      "counts": {k: 0 for k in ("traces", "draft", "reading", "deviation",
                                                "divergence", "error")}, "joint": None}],
           "knobs": [], "divergences": {"p": []}}
    page = M.render_html(doc)
    assert "<script>1" not in page and "&lt;script&gt;1&lt;/script&gt;" in page
    assert "<b>x</b>" not in page


def test_peers_left_out_say_why(monkeypatch):
    monkeypatch.setattr(M.shutil, "which", lambda name: None)
    ready, skipped = M.default_adapters()
    assert ready == ["ag-ui-protocol"]
    assert [a for a, _ in skipped] == [p.shortcut for p in M.MATRIX_PEERS[:-1]]
    assert all(r == "Node.js is not installed (no 'node' on PATH)" for _, r in skipped)
    with pytest.raises(M.PeerError, match="^--adapter tanstack-ai: Node.js is not installed"):
        M.resolve_matrix_adapter("tanstack-ai")


def test_peer_matrix_command_writes_its_output(tmp_path, capsys):
    out = tmp_path / "peers"
    argv = ["peer", "matrix", "--adapter", "model", "--adapter", "model:Q7=fatal",
            "--examples", "2", "--bfs-depth", "0", "--out", str(out)]
    assert main(argv) == 0
    assert sorted(p.name for p in out.iterdir()) == ["findings", "matrix.html", "matrix.json",
                                                     "matrix.md"]
    doc = json.loads((out / "matrix.json").read_text())
    assert doc["command"] == "peer matrix"
    assert [p["name"] for p in doc["peers"]] == ["model-draft", "model-q7-fatal"]
    q7 = next(k for k in doc["knobs"] if k["knob"] == "Q7")["cells"]
    assert (q7["model-draft"]["behavesAs"], q7["model-q7-fatal"]["behavesAs"]) == (
        "apply", "fatal")
    assert main(argv) == 0  # an earlier matrix output is replaced
    assert main(["peer", "matrix", "--adapter", "model", "--examples", "0", "--bfs-depth", "0",
                 "--format", "json"]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed[printed.index("{"):])["peers"][0]["adapter"] == "model"


def test_peer_matrix_refuses_two_adapters_of_one_name(capsys):
    assert main(["peer", "matrix", "--adapter", "model", "--adapter", "model:draft",
                 "--examples", "0", "--bfs-depth", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["activity-check: error: --adapter: two adapters are named model-draft "
                   "(finding ids would collide); give each once"]


@pytest.mark.skipif(M.peer_ready(M.MATRIX_PEERS[3]) is not None,
                    reason=f"ag-ui-client@0.0.59: {M.peer_ready(M.MATRIX_PEERS[3])}")
def test_matrix_runs_a_node_peer_with_its_version():
    m = M.build_matrix(["ag-ui-client@0.0.59:pipeline"], seed=0, stateful=2, bfs_depth=0)
    (peer,) = m.to_json()["peers"]
    assert (peer["adapter"], peer["name"], peer["version"]) == (
        "ag-ui-client@0.0.59:pipeline", "ag-ui-client-0-0-59-pipeline",
        "@ag-ui/client@0.0.59+@ag-ui/core@0.0.59 (pipeline)")
    assert "warnings (code, messageId, atEvent)" in peer["compared"]
    cells = {k["knob"]: k["cells"]["ag-ui-client-0-0-59-pipeline"] for k in m.to_json()["knobs"]}
    assert cells["Q4"]["behavesAs"] == "fatal"  # 0.0.59's verifier checks the delta's owner too

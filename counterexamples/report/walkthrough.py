"""The pieces the ambiguity notebooks (``notebooks/``) are made of: what a search found, turned
into what a reviewer reads.

Nothing here searches or judges on its own; it arranges what the engines give:

* :func:`knobs_markdown`, :func:`clauses_markdown`: the open questions and the clauses of a theme
  (:data:`model.readings.KNOBS`, :mod:`model.clauses`) as Markdown tables;
* :func:`split_finding`: the witness the all-readings breadth-first search
  (:func:`properties.search.explore.explore` with ``reading=None``) recorded for a knob, as an
  ambiguity finding (:func:`counterexamples.findings.ambiguity_finding`, unshrunk: a BFS witness
  is already of the shortest length), so that :func:`verdicts_markdown`, :func:`steps_markdown`
  and :func:`mermaid_markdown` (:func:`counterexamples.report.export.to_mermaid`) can show it;
* :func:`split_slice` and :func:`draw_slice`: a slice of the explored state graph
  (:func:`properties.search.graph.state_graph`) around a split (the shortest path to it, the states
  each class of readings reaches, and a few neighbouring states), drawn with matplotlib;
* :func:`compare_engines` and :func:`engines_markdown`: for each recorded pair of readings, the
  lengths the sweep, the pair search (:func:`properties.search.system_pair.shortest_distinguishing`) and the
  Z3 encoding (:func:`properties.smt.queries.distinguishing`) find;
* :func:`theme_traces`, :func:`peer_reports`, :func:`peer_traces_markdown` and
  :func:`peer_markdown`: a live run of the ``@ag-ui/client`` adapter (:mod:`counterexamples.peers`)
  on a theme's witnesses, corpus findings and probes, with the option of each knob it behaves as.

All outputs are deterministic for a given model (no timings, fixed orders).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

import networkx as nx

from model.clauses import get as clause
from model.events import Event
from model.readings import KNOB_BY_ID, PartialReading, describe_assignment
from model.verdict import context_of, evaluate
from properties.search.ambiguity import Witness
from properties.search.graph import state_graph
from properties.search.report import ExploreReport

__all__ = ["table", "knobs_markdown", "clauses_markdown", "theme_clauses", "splits_markdown",
           "split_finding", "trace_finding", "verdicts_markdown", "steps_markdown",
           "mermaid_markdown", "wire_lines", "split_path", "SplitPath", "split_slice",
           "draw_slice", "SIDE_COLOURS", "theme_traces", "peer_reports", "peer_traces_markdown",
           "peer_markdown", "compare_engines", "engines_markdown", "options_markdown",
           "recorded_peers_markdown", "recommendations_markdown"]


# --- Markdown -----------------------------------------------------------------------------------

_MARKDOWN_ACTIVE = re.compile(r"([\\\[\]|])")
"""Characters escaped with a backslash in a Markdown table cell: the brackets of links and
images (so no link or image comes from data), the backslash itself and the cell separator;
emphasis and code spans are left, being inert."""


def _cell(value: object) -> str:
    """``value`` as inert text inside a Markdown table cell: HTML escaped (``<script>``, ``<img
    onerror>`` and entities from a finding are shown, never run), Markdown syntax backslash-
    escaped (no link or image from data), line breaks as ``<br>``, control characters shown
    escaped (:func:`model.text.visible` without a length cut)."""
    import html
    from model.text import visible
    lines = [_MARKDOWN_ACTIVE.sub(r"\\\1", html.escape(visible(line, None), quote=False))
             for line in str(value).split("\n")]
    return "<br>".join(lines)


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table: ``headers`` (strings) and ``rows`` (sequences of values, shown with
    ``str``). Returns the text, one line per row."""
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |",
             "| " + " | ".join("---" for _ in headers) + " |"]
    lines.extend("| " + " | ".join(_cell(v) for v in row) + " |" for row in rows)
    return "\n".join(lines)


def knobs_markdown(knob_ids: Sequence[str]) -> str:
    """The knobs ``knob_ids`` (ids of :data:`model.readings.KNOBS`) as a table: id, question,
    options (the draft option first, each with what the consumer does), clause ids.

    Raises:
        KeyError: an unknown knob id."""
    rows = []
    for kid in knob_ids:
        k = KNOB_BY_ID[kid]
        options = "\n".join(f"`{name}`{' (draft)' if i == 0 else ''}: {what}"
                            for i, (name, what) in enumerate(k.options))
        rows.append((k.id, k.question, options, ", ".join(k.clauses)))
    return table(("knob", "question", "options", "clauses"), rows)


def clauses_markdown(clause_ids: Sequence[str]) -> str:
    """The clauses ``clause_ids`` from the registry (:mod:`model.clauses`) as a table: id, the
    notes' N-ids, keyword, actor, page and section, our paraphrase, related open questions.

    Raises:
        model.clauses.UnknownClauseError: an id not in the registry."""
    rows = []
    for cid in dict.fromkeys(clause_ids):
        c = clause(cid)
        rows.append((c.id, ", ".join(c.n_ids) or "-", c.keyword, c.actor,
                     f"{c.page} / {c.section}", c.summary, ", ".join(c.questions) or "-"))
    return table(("clause", "N", "keyword", "actor", "page / section", "paraphrase",
                  "questions"), rows)


def theme_clauses(knob_ids: Sequence[str], prefixes: Sequence[str] = ()) -> list[str]:
    """The clause ids a theme is about: the clauses of its knobs (in knob order), then every
    registry clause whose open questions include one of the knobs or whose id starts with one of
    ``prefixes`` (``"ACT-SNAP"``), in registry order; no id twice."""
    from model.clauses import registry
    ids = [c for kid in knob_ids for c in KNOB_BY_ID[kid].clauses]
    ids += [c.id for c in registry().values()
            if set(c.questions) & set(knob_ids) or c.id.startswith(tuple(prefixes))]
    return list(dict.fromkeys(ids))


def splits_markdown(report: ExploreReport, knob_ids: Sequence[str]) -> str:
    """For each knob of ``knob_ids``: the length of the shortest conformant trace on which it
    decides (from an all-readings :func:`~properties.search.explore.explore` report), the two readings
    the search recorded, and the context (other knobs away from draft); knobs with no split up
    to the report's depth say so."""
    rows = []
    for kid in knob_ids:
        found = report.splits.get(kid)
        if found is None:
            rows.append((kid, f"none up to {report.depth}", "-", "-"))
            continue
        trace, (a, b) = found
        context = context_of((a, b), kid)
        rows.append((kid, len(trace), f"{describe_assignment(a)}  vs  {describe_assignment(b)}",
                     describe_assignment(context) if context else "draft"))
    return table(("knob", "shortest (events)", "readings that part", "context"), rows)


# --- findings from a sweep ----------------------------------------------------------------------

def split_finding(report: ExploreReport, knob: str) -> dict:
    """The finding JSON (:meth:`counterexamples.findings.AmbiguityFinding.to_json`) of the
    witness an all-readings sweep recorded for ``knob``: its trace unshrunk (already of the
    shortest length), every verdict class, the step-by-step effects and the explanation.

    Raises:
        KeyError: the report holds no split for ``knob``."""
    trace, pair = report.splits[knob]
    return trace_finding(trace, knob, pair)


def trace_finding(events: Sequence[Event], knob: str,
                  pair: Optional[tuple[dict, dict]] = None) -> dict:
    """The finding JSON of any trace on which ``knob`` decides (conformant or not, e.g. a peer
    probe of :func:`counterexamples.peers.generate.probe_traces`), unshrunk; ``pair`` defaults to the
    pair :func:`model.verdict.splits_of` finds.

    Raises:
        KeyError: ``knob`` does not split ``events``."""
    from counterexamples.findings import ambiguity_finding
    from model.verdict import splits_of
    events = tuple(events)
    pair = pair if pair is not None else splits_of(events)[knob]
    return ambiguity_finding(Witness(knob, events, pair), shrink=False).to_json()


def wire_lines(events: Sequence) -> str:
    """A trace as AG-UI JSON lines, one compact wire event a line: ``events`` are typed events
    (:func:`model.wire.dump_jsonl`) or wire objects (dicts, as findings hold them; dumped as they
    are, member order kept)."""
    import json
    from model.wire import dump_jsonl
    events = tuple(events)
    if all(isinstance(e, dict) for e in events):
        return "".join(json.dumps(e, separators=(",", ":"), ensure_ascii=False) + "\n"
                       for e in events)
    return dump_jsonl(events)


def _verdict_text(v: dict) -> tuple[str, str, str]:
    """(messages, warnings, outcome) of a wire verdict, short."""
    msgs = []
    for m in v["messages"]:
        if m.get("role") == "activity":
            text = f"{m['id']} {m.get('activityType')} {_compact(m.get('content'))}"
            if m.get("metadata"):
                text += f" meta {_compact(m['metadata'])}"
            if m.get("subagentRunId"):
                text += f" @{m['subagentRunId']}"
        else:
            text = f"{m['id']} ({m.get('role')})"
        msgs.append(text)
    warnings = ", ".join(f"{w['code']}@{w['atEvent']}" for w in v["warnings"]) or "-"
    outcome = (f"FATAL {v['fatal']['code']}@{v['fatal']['atEvent']} ({v['fatal']['clause']})"
               if v.get("fatal") else v.get("run", ""))
    return "\n".join(msgs) or "(none)", warnings, outcome


def _compact(value: object) -> str:
    import json
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def verdicts_markdown(finding: dict, limit: int = 4) -> str:
    """The verdict classes of an ambiguity finding as a table: the readings of each class (at
    most ``limit`` assignments shown, then a count), whether ``draft`` is among them, the final
    messages, warnings (code@event), the outcome (run status, or the fatal with its clause) and
    the next run input (message ids)."""
    rows = []
    for c in finding["verdicts"]:
        names = c["readings"][:limit]
        more = len(c["readings"]) - len(names)
        msgs, warnings, outcome = _verdict_text(c["verdict"])
        run_input = ", ".join(m["id"] for m in c["verdict"].get("runInput", [])) or "(empty)"
        rows.append(("\n".join(names) + (f"\n(+{more} more)" if more > 0 else ""),
                     "yes" if c.get("includesDraft") else "", msgs, warnings, outcome, run_input))
    return table(("readings", "draft?", "messages", "warnings", "outcome", "run input"), rows)


def steps_markdown(finding: dict) -> str:
    """The finding's step-by-step effects (``finding["steps"]``): one row per event and group of
    classes that agree at that step."""
    rows = []
    for s in finding["steps"]:
        for i, (labels, text) in enumerate(s["effect"].items()):
            readings = labels if len(s["effect"]) > 1 else "every reading"
            rows.append((s["index"] if i == 0 else "", s["event"] if i == 0 else "",
                         readings, text))
    return table(("#", "event", "readings", "effect"), rows)


def mermaid_markdown(finding: dict) -> str:
    """The finding as a fenced Mermaid block (:func:`counterexamples.report.export.to_mermaid`), ready
    for ``IPython.display.Markdown``."""
    from counterexamples.report.export import to_mermaid
    text = to_mermaid(finding)
    fence = "```"
    while fence in text:  # a fence the diagram's text cannot close
        fence += "`"
    return f"{fence}mermaid\n{text}{fence}"


# --- the engines side by side ------------------------------------------------------------------

def compare_engines(report: ExploreReport, knob_ids: Sequence[str],
                    worlds: Optional[Mapping[str, object]] = None) -> dict:
    """For each knob of ``knob_ids`` the sweep splits: the two complete readings of its recorded
    pair (:func:`model.verdict.split_readings`), the sweep's length, the length the pair search
    finds (:func:`properties.search.system_pair.shortest_distinguishing`, bounded by the sweep's length, so
    it finds nothing longer), and, per world of ``worlds`` (``{name: properties.smt.world.World}``),
    the answer of the Z3 encoding (:func:`properties.smt.queries.distinguishing`, same bound; it
    replays its witness on the executable model and raises ``CrossCheckError`` on any
    difference). Knobs outside the Z3 fragment get no Z3 answer.

    Returns:
        ``{knob: {"readings": (a, b), "sweep": int, "pairSearch": int or None,
        "z3": {world name: Answer}}}`` in ``knob_ids`` order."""
    from model.verdict import split_readings
    from properties.search.system_pair import shortest_distinguishing
    out = {}
    for kid in knob_ids:
        if kid not in report.splits:
            continue
        trace, pair = report.splits[kid]
        a, b = split_readings(pair, kid)
        n = len(trace)
        found = shortest_distinguishing(a, b, depth=n)
        answers = {}
        if worlds:
            from properties.smt.encoding import FRAGMENT_KNOBS
            from properties.smt.queries import distinguishing
            if kid in FRAGMENT_KNOBS:
                answers = {name: distinguishing(a, b, depth=n, world=w)
                           for name, w in worlds.items()}
        out[kid] = {"readings": (a, b), "sweep": n,
                    "pairSearch": len(found) if found is not None else None, "z3": answers}
    return out


def engines_markdown(engines: Mapping[str, dict]) -> str:
    """:func:`compare_engines` as a table: knob, the pair of readings, the sweep's length, the
    pair search's, and per world Z3's status and length."""
    worlds = list(dict.fromkeys(w for e in engines.values() for w in e["z3"]))
    rows = []
    for kid, e in engines.items():
        a, b = e["readings"]
        row = [kid, f"{a.name or 'draft'}  vs  {b.name or 'draft'}", e["sweep"],
               e["pairSearch"] if e["pairSearch"] is not None else "none"]
        for w in worlds:
            ans = e["z3"].get(w)
            row.append("outside the fragment" if ans is None else
                       f"{ans.length} (sat)" if ans.status == "sat" else
                       f"{ans.status} up to {ans.depth}")
        rows.append(row)
    return table(["knob", "readings", "sweep", "pair search"] + [f"Z3, {w}" for w in worlds],
                 rows)


# --- the state graph around a split -------------------------------------------------------------

SIDE_COLOURS = ("#1f77b4", "#d62728", "#7f7f7f")
"""Colours of the drawing: the first reading of the pair, the second, and any other class."""


@dataclass(frozen=True)
class SplitPath:
    """Where a knob splits in an all-readings sweep.

    Attributes:
        knob: the knob; trace: the witness; pair: the two assignments that part.
        path: node ids from the initial node to the node the last event is taken from.
        leaves: ``(node id, class assignment)`` for each class of readings the last event
            leads to, in the search's order.
    """

    knob: str
    trace: tuple[Event, ...]
    pair: tuple[dict, dict]
    path: tuple[int, ...]
    leaves: tuple[tuple[int, dict], ...]


def split_path(report: ExploreReport, knob: str) -> SplitPath:
    """Find the nodes of ``report`` (an all-readings sweep run with ``keep_edges=True``) on the
    shortest path of ``knob``'s witness, and the nodes its last event leads to.

    Along the path the node taken at each step is the one whose class of readings agrees with the
    recorded pair (a step that forks leads to one node per class).

    Raises:
        KeyError: no split for ``knob``; ValueError: the report kept no edges, or the path is not
            in its search tree."""
    trace, pair = report.splits[knob]
    if not report.edges_seen:
        raise ValueError("the report kept no edges: explore(..., keep_edges=True)")
    merged = {**pair[0], **pair[1]}
    children: dict = {}
    for child, (parent, event) in enumerate(report.parents):
        if child:
            children.setdefault((parent, event), []).append(child)
    path = [0]
    for event in trace[:-1]:
        fits = [c for c in children.get((path[-1], event), ())
                if all(merged.get(k) == v for k, v in report.nodes[c][3])]
        if not fits:
            raise ValueError(f"{knob}: the witness leaves the search tree at {event.type_name}")
        path.append(fits[0])
    last = trace[-1]
    leaves = tuple((t, dict(report.nodes[t][3])) for s, t, e in report.edges_seen
                   if s == path[-1] and e == last)
    return SplitPath(knob, tuple(trace), pair, tuple(path), leaves)


def _side(assignment: dict, pair: tuple[dict, dict]) -> int:
    """0 or 1 when ``assignment`` agrees with that side of the pair on every knob both fix,
    else 2."""
    for i, side in enumerate(pair):
        if all(side.get(k, v) == v for k, v in assignment.items()) and \
                all(assignment.get(k, v) == v for k, v in side.items()):
            return i
    return 2


def _state_text(state, limit: int = 4) -> str:
    """A few lines for a consumer state: one per held message (activity: id, type, content,
    metadata, owner), then the run status when it is not ``active``."""
    lines = []
    for m in state.messages[:limit]:
        if m.is_activity:
            text = f"{m.id} {m.activity_type} {m.content}"
            if m.metadata:
                text += f" m{m.metadata}"
            if m.owner:
                text += f" @{m.owner}"
        else:
            text = f"{m.id} ({m.role})"
        lines.append(text)
    if len(state.messages) > limit:
        lines.append(f"+{len(state.messages) - limit} more")
    status = "rejected" if state.halted else state.run
    if status != "active":
        lines.append(status)
    return "\n".join(lines) or "(nothing held)"


def split_slice(report: ExploreReport, knob: str, graph: Optional[nx.DiGraph] = None,
                neighbours: int = 2) -> nx.DiGraph:
    """A slice of the state graph around ``knob``'s split: the shortest path to it, the node each
    class of readings reaches with the last event, and up to ``neighbours`` other successors of
    every node on the path (in the search's order).

    Args:
        report: an all-readings sweep (``explore(depth, reading=None, keep_edges=True)``).
        graph: :func:`properties.search.graph.state_graph` of the report (built here when None; pass
            it to draw several knobs from one sweep).
        neighbours: side states per path node.

    Returns:
        A ``networkx.DiGraph`` whose nodes carry ``role`` (``"path"``, ``"leaf"``, ``"side"``),
        ``layer`` (events from the start), ``text`` (the state, and for a leaf the readings of its
        class and what the last step surfaced), ``side`` (leaves: 0 or 1 for the two readings of
        the pair, 2 for another class), and whose edges carry ``event`` (a short label) and
        ``role`` (``"path"``, ``"split"``, ``"side"``).

    Raises:
        KeyError, ValueError: as :func:`split_path`."""
    from counterexamples.report.export import _event_label
    sp = split_path(report, knob)
    graph = graph if graph is not None else state_graph(report)
    out = nx.DiGraph(knob=knob, pair=tuple(describe_assignment(a) for a in sp.pair))

    def label(event: Event) -> str:
        return _event_label(event.to_wire(), event)

    for layer, node in enumerate(sp.path):
        out.add_node(node, role="path", layer=layer, text=_state_text(report.nodes[node][1]))
    for a, b, event in zip(sp.path, sp.path[1:], sp.trace):
        out.add_edge(a, b, event=label(event), role="path")
    on_path = set(sp.path)
    leaf_ids = {t for t, _ in sp.leaves}
    for layer, node in enumerate(sp.path):
        taken = 0
        for _, target, data in sorted(graph.out_edges(node, data=True), key=lambda e: e[1]):
            if taken >= neighbours:
                break
            if target in on_path or target in leaf_ids or target in out:
                continue
            out.add_node(target, role="side", layer=layer + 1,
                         text=_state_text(report.nodes[target][1], limit=2))
            out.add_edge(node, target, event=data.get("event", ""), role="side")
            taken += 1
    last = label(sp.trace[-1])
    n = len(sp.trace)
    for target, assignment in sp.leaves:
        verdict = evaluate(sp.trace, PartialReading(assignment).complete())
        surfaced = [f"warn {w.code}" for at, w in verdict.warnings if at == n - 1]
        if verdict.fatal and verdict.fatal[0] == n - 1:
            surfaced.append(f"FATAL {verdict.fatal[1].code}")
        text = "\n".join([describe_assignment(assignment), _state_text(report.nodes[target][1])]
                         + surfaced)
        out.add_node(target, role="leaf", layer=n, text=text, side=_side(assignment, sp.pair))
        out.add_edge(sp.path[-1], target, event=last, role="split")
    return out


def _positions(g: nx.DiGraph) -> dict:
    """Deterministic layered positions: x by layer; path nodes on y=0, leaves stacked above it,
    side nodes stacked below it."""
    pos, leaves = {}, []
    for node, data in sorted(g.nodes(data=True)):
        if data["role"] == "path":
            pos[node] = (data["layer"] * _LAYER, 0.0)
        elif data["role"] == "leaf":
            leaves.append(node)
    for i, node in enumerate(leaves):
        pos[node] = (g.nodes[node]["layer"] * _LAYER, 1.2 + 1.6 * i)
    floor = min([0.0] + [pos[n][1] for n in leaves]) - 0.4
    below: dict = {}
    for node, data in sorted(g.nodes(data=True)):
        if data["role"] == "side":
            below[data["layer"]] = below.get(data["layer"], 0) + 1
            pos[node] = (data["layer"] * _LAYER, floor - 1.4 * below[data["layer"]])
    return pos


_LAYER = 4.5
"""Horizontal distance between layers of the drawing."""


def draw_slice(g: nx.DiGraph, ax=None, title: Optional[str] = None):
    """Draw a :func:`split_slice` with matplotlib: path states in black, side states in grey,
    each leaf in the colour of its side of the pair (:data:`SIDE_COLOURS`), edges labelled with
    their events, the split's edges coloured like their leaves.

    Args:
        g: the slice; ax: a matplotlib Axes (a new figure when None); title: the axes' title
            (default: the knob and the pair).

    Returns:
        The matplotlib Figure."""
    import matplotlib.pyplot as plt
    layers = max(d["layer"] for _, d in g.nodes(data=True))
    if ax is None:
        fig, ax = plt.subplots(figsize=(3.8 * (layers + 1), 6.5))
    else:
        fig = ax.figure
    pos = _positions(g)
    for role, colour, width, style in (("side", "#bbbbbb", 0.8, "dashed"),
                                       ("path", "black", 1.6, "solid")):
        edges = [(a, b) for a, b, d in g.edges(data=True) if d["role"] == role]
        nx.draw_networkx_edges(g, pos, edgelist=edges, ax=ax, edge_color=colour, width=width,
                               style=style, arrows=True, arrowsize=10, node_size=1400)
    for a, b, d in g.edges(data=True):
        if d["role"] == "split":
            nx.draw_networkx_edges(g, pos, edgelist=[(a, b)], ax=ax, width=2.0, arrows=True,
                                   edge_color=SIDE_COLOURS[g.nodes[b]["side"]], arrowsize=12,
                                   node_size=1400)
    # one label per event: the path's edges, the first split edge, the side edges (small, grey)
    split_labelled = False
    labels, side_labels = {}, {}
    for a, b, d in g.edges(data=True):
        text = d["event"].replace(" (", "\n(")
        if d["role"] == "path":
            labels[(a, b)] = text
        elif d["role"] == "split" and not split_labelled:
            labels[(a, b)] = text
            split_labelled = True
        elif d["role"] == "side":
            side_labels[(a, b)] = text
    for edge_labels, size, colour, at in ((labels, 6.5, "black", 0.5),
                                          (side_labels, 5.0, "#999999", 0.3)):
        nx.draw_networkx_edge_labels(g, pos, edge_labels=edge_labels, ax=ax, font_size=size,
                                     font_color=colour, rotate=False, label_pos=at,
                                     bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="none",
                                               alpha=0.85))
    for node, data in g.nodes(data=True):
        x, y = pos[node]
        if data["role"] == "leaf":
            colour, size, weight = SIDE_COLOURS[data["side"]], 6.5, "bold"
        elif data["role"] == "path":
            colour, size, weight = "black", 6.5, "normal"
        else:
            colour, size, weight = "#888888", 5.5, "normal"
        ax.text(x, y, data["text"], fontsize=size, color=colour, ha="center", va="center",
                fontweight=weight, bbox=dict(boxstyle="round,pad=0.3", fc="white", ec=colour,
                                             lw=1.0 if data["role"] != "side" else 0.5))
    pair = g.graph.get("pair", ("", ""))
    ax.set_title(title or f"{g.graph.get('knob', '')}: {pair[0]}  vs  {pair[1]}", fontsize=9)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    ax.set_xlim(min(xs) - 1.8, max(xs) + 1.8)
    ax.set_ylim(min(ys) - 1.0, max(ys) + 1.2)
    ax.axis("off")
    return fig


# --- peers --------------------------------------------------------------------------------------

def _probe_knob(name: str) -> Optional[str]:
    """The knob a probe name (``"Q9-replace"``, ``"Q4-opener"``) is about: the longest knob id it
    equals or starts with followed by ``-``."""
    from model.readings import KNOBS
    found = [k.id for k in KNOBS if name == k.id or name.startswith(k.id + "-")]
    return max(found, key=len) if found else None


def theme_traces(report: Optional[ExploreReport], knob_ids: Sequence[str]) -> dict:
    """The traces to put to a peer for a theme, ``{trace id: wire events}``: the sweep's witness
    of each knob (``bfs-<knob>``, when ``report`` holds one), the committed corpus finding of each
    knob (its id, :func:`counterexamples.corpus.load_corpus`), and the peer module's probes whose
    id names one of the knobs (:func:`counterexamples.peers.generate.probe_traces`), in that order."""
    from counterexamples.corpus import load_corpus
    from counterexamples.peers.generate import probe_traces
    out: dict = {}
    for kid in knob_ids:
        if report is not None and kid in report.splits:
            out[f"bfs-{kid}"] = [e.to_wire() for e in report.splits[kid][0]]
    wanted = set(knob_ids)
    for entry in load_corpus():
        if entry.get("knob") in wanted:
            out[entry["id"]] = list(entry["events"])
    for probe in probe_traces():
        if _probe_knob(probe.id[len("probe-"):]) in wanted:
            out[probe.id] = list(probe.wire)
    return out


def peer_reports(traces: Mapping[str, Sequence[dict]],
                 modes: Sequence[str] = ("reducer", "pipeline")) -> dict:
    """Run the ``@ag-ui/client`` adapter (``peers/ag-ui-client``) live on ``traces`` (``{trace
    id: wire events}``), once per mode, without shrinking: ``{mode: PeerReport}``
    (:func:`counterexamples.peers.check.check_peer`; each report holds one classification per trace and
    the knob table).

    Raises:
        counterexamples.peers.adapter.PeerError: the adapter cannot run (see
            :func:`counterexamples.peers.adapter.node_peer_ready` to test first)."""
    from counterexamples.peers.adapter import AdapterProcess, resolve_adapter
    from counterexamples.peers.traces import PeerTrace
    from counterexamples.peers.check import check_peer
    items = [PeerTrace.of(tid, wire, None, "notebook") for tid, wire in traces.items()]
    out = {}
    for mode in modes:
        with AdapterProcess(resolve_adapter(f"ag-ui-client:{mode}")) as adapter:
            out[mode] = check_peer(adapter, items, shrink=False)
    return out


def peer_traces_markdown(reports: Mapping[str, object], limit: int = 3) -> str:
    """One row per trace of :func:`peer_reports` (or of any :class:`counterexamples.peers.
    PeerReport` per mode): per mode, how the peer's answer relates to the model: ``draft`` or
    ``reading`` with the readings that give the same verdict (at most ``limit``, then a count),
    ``divergence`` with the nearest reading and where it differs, or ``error``."""
    modes = list(reports)
    ids = [r.trace.id for r in reports[modes[0]].results] if modes else []
    by_mode = {m: {r.trace.id: r.classification for r in reports[m].results} for m in modes}
    rows = []
    for tid in ids:
        row = [tid]
        for m in modes:
            c = by_mode[m].get(tid)
            if c is None:
                row.append("-")
            elif c.kind in ("draft", "reading"):
                shown = c.readings[:limit]
                more = len(c.readings) - len(shown)
                row.append(f"{c.kind}: " + "; ".join(shown) + (f" (+{more})" if more > 0 else ""))
            elif c.kind == "divergence":
                row.append(f"divergence: nearest {c.nearest}, differs in {', '.join(c.aspects)}")
            else:
                row.append(f"error: {c.error}")
        rows.append(row)
    return table(["trace"] + [f"ag-ui-client:{m}" for m in modes], rows)


def peer_markdown(reports: Mapping[str, object], knob_ids: Sequence[str]) -> str:
    """Per knob of ``knob_ids``: the peer behaviour the knob records
    (:attr:`model.readings.Knob.peers`) and, per mode of ``reports`` (:func:`peer_reports`), the
    option the live run shows (or ``undetermined``/``inconsistent``/``no evidence``) with the
    traces that separate the options."""
    rows = []
    for kid in knob_ids:
        recorded = ", ".join(f"{peer}: {option}" for peer, option in KNOB_BY_ID[kid].peers)
        row = [kid, recorded or "-"]
        for mode, report in reports.items():
            k = next(b for b in report.knobs if b.knob == kid)
            shown = k.behaves_as or {"undetermined": "one of " + "/".join(k.options),
                                     "inconsistent": "no single option",
                                     "no-evidence": "no evidence"}.get(k.status, k.status)
            row.append(f"{shown}" + (f" ({', '.join(k.evidence)})" if k.evidence else ""))
        rows.append(row)
    return table(["knob", "recorded"] + [f"ag-ui-client:{m} (live)" for m in reports], rows)


# --- what each option ends with (the settlement table's ``options``) ---------------------------

def options_markdown(outcomes: Sequence[Mapping[str, object]]) -> str:
    """What each option of a knob ends with, as a table: ``outcomes`` is a settlement row's
    ``options`` (:func:`properties.questions.option_outcomes` for a consumer knob: the held
    messages, warnings, fatal or run status; or, for a producer-side knob, ``{"option",
    "reading", "conformant", "breaks"}`` rows: whether the witness is conformant under that
    option and the producer clauses its last event breaks)."""
    if outcomes and "conformant" in outcomes[0]:
        return table(("option", "reading", "witness conformant?", "clauses broken"),
                     [(o["option"], o["reading"], "yes" if o["conformant"] else "no",
                       ", ".join(o["breaks"]) or "-") for o in outcomes])
    rows = []
    for o in outcomes:
        msgs, _, _ = _verdict_text({"messages": o["messages"], "warnings": []})
        outcome = f"FATAL {o['fatal']}" if o["fatal"] else o["run"]
        rows.append((o["option"], o["reading"], msgs, ", ".join(o["warnings"]) or "-", outcome))
    return table(("option", "reading", "messages", "warnings", "outcome"), rows)


def recorded_peers_markdown(knob_ids: Sequence[str]) -> str:
    """The option each peer of the conformance matrix was recorded to take per knob of
    ``knob_ids`` (``model/data/peer_options.json``, :func:`model.readings.peer_options_document`; ``not
    observable`` where its answers do not show the knob), one row per knob, one column per
    peer in the matrix's order.

    Raises:
        KeyError: an unknown knob id."""
    from model.readings import peer_options_document
    peers = peer_options_document()["peers"]
    rows = [[kid] + [p["knobs"][kid].get("option", "not observable") for p in peers]
            for kid in knob_ids]
    return table(["knob"] + [p["name"] for p in peers], rows)


def recommendations_markdown(ids: Sequence[str]) -> str:
    """The proposed answers of ``ids`` (knob ids, or a question without knob such as ``Q22``)
    as Markdown bullets, from the project's one home for them,
    :data:`model.readings.RECOMMENDATIONS` (``activity-check questions`` and ``resolve
    --recommended`` read the same data): the recommended option, ★ for a starred question of
    the notes, the proposed wording in italics, the argument and the pages it cites.

    Raises:
        KeyError: an id with no recommendation."""
    from model.readings import RECOMMENDATIONS
    lines = []
    for kid in ids:
        rec = RECOMMENDATIONS["knobs"].get(kid) or RECOMMENDATIONS["questions"][kid]
        head = f"**{kid}: `{rec['option']}`**" if "option" in rec else f"**{kid}: no knob.**"
        star = " ★" if rec["important"] else ""
        cites = "; ".join(f"{c['page']} > {c['section']}" for c in rec.get("cites", ()))
        wording = f" *{rec['wording']}*" if rec.get("wording") else ""
        lines.append(f"* {head}{star}{wording} {rec['argument']}" +
                     (f" ({cites})" if cites else ""))
    return "\n".join(lines) + "\n"

"""The explored state graph as networkx, built on demand from a report (never inside the search
loop): :func:`state_graph` for export (GraphML, DOT) and drawing, :func:`shortest_trace_to` for
a graph query (the shortest explored trace to a class of states).
"""
from __future__ import annotations

from typing import Callable, Optional

import networkx as nx

from model.consumer import ConsumerState
from model.events import Event
from model.readings import describe_assignment
from properties.search.reading_classes import _FULL
from properties.search.report import ExploreReport

__all__ = ["shortest_trace_to", "state_graph"]


def state_graph(report: ExploreReport, max_nodes: Optional[int] = None) -> nx.DiGraph:
    """The explored state graph as a networkx ``DiGraph`` (built on demand, never in the search).

    Nodes are node ids with attributes ``label`` (run status and held messages), ``messages``,
    ``run``, ``halted`` and ``conformant``; every examined edge is present (edges into states
    already visited included; parallel edges between the same two states keep the first event),
    with attributes ``event`` (short text) and ``wire`` (the event as compact JSON) and
    ``tree`` (True on the shortest-path tree the search's parent map holds). Under every reading
    an edge goes to each class of readings a move forks into, so the graph may have more
    edges than :attr:`ExploreReport.edges` counts moves. Without
    ``keep_edges`` the search kept only its parent map, and the graph is that tree. Nodes also
    carry ``readings``: the class of readings the node stands for (all-readings sweep).
    ``max_nodes`` keeps the first nodes in BFS order and the edges among them."""
    import json
    graph = nx.DiGraph()
    limit = len(report.nodes) if max_nodes is None else min(max_nodes, len(report.nodes))
    for node in range(limit):
        belief, state, producers, cls = report.nodes[node]
        conformant = bool(producers)
        held = " ".join(f"{m.id}:{m.role}" for m in state.messages)
        status = "rejected" if state.halted else state.run
        graph.add_node(node, messages=held, run=state.run, halted=state.halted,
                       conformant=conformant, label=f"#{node} {status}: {held or 'no messages'}",
                       readings="one reading" if cls == _FULL else describe_assignment(dict(cls)))
    for source, target, event in _graph_edges(report):
        if source >= limit or target >= limit or graph.has_edge(source, target):
            continue
        graph.add_edge(source, target, tree=report.parents[target][0] == source and target != 0,
                       event=f"{event.type_name} {getattr(event, 'message_id', '') or ''}".strip(),
                       wire=json.dumps(event.to_wire(), separators=(",", ":")))
    return graph


def _graph_edges(report: ExploreReport):
    """Every examined edge if the search kept them, else the parent map's tree edges."""
    if report.edges_seen:
        return report.edges_seen
    return [(parent, node, event) for node, (parent, event) in enumerate(report.parents) if node]


def shortest_trace_to(report: ExploreReport, predicate: Callable[[ConsumerState], bool]
                      ) -> Optional[tuple[Event, ...]]:
    """A graph query: the shortest explored trace to a state of a class.

    Args:
        report: an exploration (any mode; with ``keep_edges`` the query runs on every examined
            edge, else on the search tree, which holds a shortest path to every node).
        predicate: the state class, as a test on the consumer state (e.g. "some activity is
            owned by sub-1 and typed SEARCH").

    Returns:
        The events from the initial state to the nearest matching state (networkx shortest path
        on :func:`state_graph`), or None when no explored state matches (the class is not
        reachable within the bound).
    """
    graph = state_graph(report)
    lengths = nx.single_source_shortest_path_length(graph, 0)
    found = [(lengths[n], n) for n in graph if n in lengths and predicate(report.nodes[n][1])]
    if not found:
        return None
    target = min(found)[1]
    path = nx.shortest_path(graph, 0, target)
    events = {(a, b): e for a, b, e in reversed(list(_graph_edges(report)))}
    return tuple(events[(a, b)] for a, b in zip(path, path[1:]))

"""The options each peer of the conformance matrix was recorded to take: the one home of that
data, ``model/data/peer_options.json`` (schema: ``counterexamples/schemas/
peer-options.schema.json``), written by ``activity-check peer options --out`` from the knobs'
separating traces run through each peer's adapter (:mod:`counterexamples.peers.options`), kept
with each peer's package version so that reports (``resolve``, ``questions``) work without Node.

Read here once, checked against the knobs (:data:`model.readings.KNOBS`): every peer names
every knob, with an option of that knob or ``notObservable`` and its reason.

Clauses: IDX-CONFORMANCE (a peer's options are readings of the notes' Q-ids).
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Optional

from model.readings import KNOB_BY_ID, KNOBS

__all__ = ["PEER_OPTIONS_FILE", "PeerOptionsError", "load_peer_options", "peer_options",
           "recorded_options", "recorded_peer", "knob_peers", "peer_groups"]

PEER_OPTIONS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                                 "peer_options.json")
"""The recorded peer options (see the module docstring)."""

MAX_FILE_CHARS = 4_000_000
"""The most characters read from a peer options file (the committed one holds far fewer)."""


class PeerOptionsError(ValueError):
    """A peer options document that does not fit the knobs: one line naming the file, the peer
    and the knob."""


def _check(doc, path: str) -> dict:
    """``doc`` when every peer entry names every knob with one of its options or a reason; else
    :class:`PeerOptionsError`."""
    if not isinstance(doc, dict) or not isinstance(doc.get("peers"), list):
        raise PeerOptionsError(f"{path}: not a peer options document (no 'peers' list)")
    for n, peer in enumerate(doc["peers"]):
        where = f"{path}: peers[{n}]"
        if not isinstance(peer, dict) or not isinstance(peer.get("knobs"), dict):
            raise PeerOptionsError(f"{where}: not an object with 'knobs'")
        for member in ("name", "package", "version", "adapter"):
            if not isinstance(peer.get(member), str) or not peer[member]:
                raise PeerOptionsError(f"{where}.{member}: a non-empty string is required")
        where = f"{path}: {peer['name']}"
        knobs = peer["knobs"]
        if set(knobs) != set(KNOB_BY_ID):
            raise PeerOptionsError(f"{where}: knobs {sorted(set(knobs) ^ set(KNOB_BY_ID))} are "
                                   "missing or unknown")
        for kid, entry in knobs.items():
            if not isinstance(entry, dict):
                raise PeerOptionsError(f"{where}: {kid}: not an object")
            option = entry.get("option")
            if option is None:
                if not isinstance(entry.get("notObservable"), str):
                    raise PeerOptionsError(f"{where}: {kid}: neither 'option' nor "
                                           "'notObservable' (a reason)")
            elif option not in KNOB_BY_ID[kid].option_names:
                raise PeerOptionsError(f"{where}: {kid}: unknown option {option!r}")
    return doc


def load_peer_options(path: str = PEER_OPTIONS_FILE) -> dict:
    """The peer options document at ``path``, checked against the knobs.

    Raises:
        PeerOptionsError: unreadable, too long (:data:`MAX_FILE_CHARS`), not JSON, or a peer
            entry that does not fit the knobs (one line naming file, peer and knob)."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read(MAX_FILE_CHARS + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise PeerOptionsError(f"{path}: cannot read: {exc}") from None
    if len(text) > MAX_FILE_CHARS:
        raise PeerOptionsError(f"{path}: longer than {MAX_FILE_CHARS} characters")
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise PeerOptionsError(f"{path}: not JSON: {exc}") from None
    return _check(doc, path)


@lru_cache(maxsize=1)
def peer_options() -> dict:
    """The committed document (:data:`PEER_OPTIONS_FILE`), read once: ``{"about", "tool",
    "command", "traces": {"depth", "lifecycleDepth", "violatingDepth", "items": [{"id",
    "knob", "separates", "conformant", "trace"}]}, "peers": [{"name", "package", "version",
    "adapter", "reports", "knobs": {knob id: {"option", "evidence", "conformantOnly"} |
    {"notObservable", "evidence"}}}]}``.

    Raises:
        ImportError: the committed file does not fit the knobs (a declaration error)."""
    try:
        return load_peer_options()
    except PeerOptionsError as exc:  # pragma: no cover - a declaration error
        raise ImportError(str(exc)) from None


def recorded_options() -> dict[str, dict[str, str]]:
    """``{peer name: {knob id: option}}``: the option each peer was recorded to take, for the
    knobs where it is observable, peers in the matrix's order, knobs in knob order."""
    out = {}
    for peer in peer_options()["peers"]:
        out[peer["name"]] = {k.id: peer["knobs"][k.id]["option"] for k in KNOBS
                             if "option" in peer["knobs"][k.id]}
    return out


def recorded_peer(name: str) -> Optional[dict]:
    """The recorded entry of the peer named ``name`` (or whose ``adapter`` is ``name``), or
    None."""
    for peer in peer_options()["peers"]:
        if name in (peer["name"], peer["adapter"]):
            return peer
    return None


def knob_peers(knob_id: str) -> tuple[tuple[str, str], ...]:
    """``((peer name, option), ...)``: the peers recorded to take an option of ``knob_id``, in
    the matrix's order (those for which it is not observable left out)."""
    return tuple((peer["name"], peer["knobs"][knob_id]["option"])
                 for peer in peer_options()["peers"] if "option" in peer["knobs"][knob_id])


def peer_groups(knob_id: str) -> list[tuple[Optional[str], list[str]]]:
    """The peers grouped by the option of ``knob_id`` they were recorded to take: ``[(option,
    [peer name, ...]), ...]`` in the knob's option order, then ``(None, [...])`` for the peers
    for which it is not observable; empty groups left out, peers in the matrix's order."""
    groups: dict = {o: [] for o in KNOB_BY_ID[knob_id].option_names}
    groups[None] = []
    for peer in peer_options()["peers"]:
        groups[peer["knobs"][knob_id].get("option")].append(peer["name"])
    return [(o, names) for o, names in groups.items() if names]

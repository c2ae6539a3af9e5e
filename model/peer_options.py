"""The options each peer of the conformance matrix was recorded to take: the one home of that
data, ``model/data/peer_options.json`` (schema: ``counterexamples/schemas/
peer-options.schema.json``), written by ``activity-check peer options --out`` from the knobs'
separating traces run through each peer's adapter (:mod:`counterexamples.peers.options`), kept
with each peer's package version so that reports (``resolve``, ``questions``) work without Node.

:func:`load_peer_options` reads and checks a document against the knobs it is given (every
peer names every knob, with an option of that knob or ``notObservable`` and its reason);
:func:`model.readings.peer_options_document` loads the committed one once, checked against
:data:`model.readings.KNOBS`, and the knobs read it (:attr:`model.readings.Knob.peers`). This
module imports nothing of the model (the knobs import it).

Clauses: IDX-CONFORMANCE (a peer's options are readings of the notes' Q-ids).
"""
from __future__ import annotations

import json
import os
from typing import Mapping, Sequence

__all__ = ["PEER_OPTIONS_FILE", "PeerOptionsError", "load_peer_options"]

PEER_OPTIONS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                                 "peer_options.json")
"""The recorded peer options (see the module docstring)."""

MAX_FILE_CHARS = 4_000_000
"""The most characters read from a peer options file (the committed one holds far fewer)."""


class PeerOptionsError(ValueError):
    """A peer options document that does not fit the knobs: one line naming the file, the peer
    and the knob."""


def _check(doc, path: str, knob_options: Mapping[str, Sequence[str]]) -> dict:
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
        if set(knobs) != set(knob_options):
            raise PeerOptionsError(f"{where}: knobs {sorted(set(knobs) ^ set(knob_options))} "
                                   "are missing or unknown")
        for kid, entry in knobs.items():
            if not isinstance(entry, dict):
                raise PeerOptionsError(f"{where}: {kid}: not an object")
            option = entry.get("option")
            if option is None:
                if not isinstance(entry.get("notObservable"), str):
                    raise PeerOptionsError(f"{where}: {kid}: neither 'option' nor "
                                           "'notObservable' (a reason)")
            elif option not in knob_options[kid]:
                raise PeerOptionsError(f"{where}: {kid}: unknown option {option!r}")
    return doc


def load_peer_options(path: str, knob_options: Mapping[str, Sequence[str]]) -> dict:
    """The peer options document at ``path``, checked against ``knob_options`` (``{knob id:
    option names}``, every knob of the model): ``{"about", "tool", "command", "traces":
    {"depth", "lifecycleDepth", "violatingDepth", "items": [{"id", "knob", "separates",
    "conformant", "trace"}]}, "peers": [{"name", "package", "version", "adapter", "reports",
    "knobs": {knob id: {"option", "evidence", "conformantOnly"} | {"notObservable",
    "evidence"}}}]}``.

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
    return _check(doc, path, knob_options)

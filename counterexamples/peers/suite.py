"""The corpus as a ready-made test:
``pytest --pyargs counterexamples.peers.suite --activity-peer CMD``.

One test per corpus trace (see :mod:`counterexamples.peers.pytest_plugin`, which provides the
``activity_trace`` and ``activity_peer`` fixtures); every test skips when no ``--activity-peer`` is
given.
"""


def test_activity_corpus(activity_trace, activity_peer):
    """The peer's verdict on the trace is one a reading of the draft gives (or draft's own, with
    ``--activity-peer-accept draft``)."""
    activity_peer.check(activity_trace)

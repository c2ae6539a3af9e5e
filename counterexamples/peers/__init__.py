"""Peers: real implementations driven through an adapter, checked against the model.

An *adapter* is any program that speaks the adapter protocol (docs/peers.md, "Adapter protocol"): JSON
lines on stdin and stdout, one long-lived process for a whole corpus. This package is the checking
side:

* :class:`AdapterProcess` runs the adapter, sends requests (pipelined in batches), and turns a hung,
  crashed or babbling adapter into an error for the one trace it was working on, then restarts it
  and goes on with the next;
* :func:`classify` compares the peer's answer with every verdict class of the model
  (:func:`model.verdict.reading_leaves`) on the parts of a verdict the answer makes comparable
  (:class:`Observed`): the peer agrees with ``draft``, with some other reading, or with none (a
  *divergence*);
* :func:`knob_table` says, for each knob, which option the peer behaves as, from the traces that
  separate the options;
* :func:`shrink_divergence` shrinks a divergent trace by re-running the peer on smaller
  candidates (delta debugging, then optional members, then canonical names), and
  :func:`divergence_finding` builds the finding, with the peer's verdict beside the model's;
* :func:`check_peer` and :func:`search_peer` are the two jobs behind ``activity-check peer check``
  and ``activity-check peer search``.

Layering: this package uses ``model`` and ``properties`` and the rest of ``counterexamples``; nothing
in ``model`` or ``properties`` imports it.
"""

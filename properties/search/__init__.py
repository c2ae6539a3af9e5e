"""The search driver and its engines: the breadth-first driver (:mod:`.bfs`), its fingerprint store
(:mod:`.store`), checkpoints (:mod:`.checkpoint`), the Dask engine (:mod:`.dask_engine`), the numpy
blocks of the sweep (:mod:`.blocks`), the Hypothesis state machines (:mod:`.machines`), the
ambiguity search (:mod:`.ambiguity`) and the ``explore`` entry point (:mod:`.explore`). Z3 bounded
model checking is beside it in :mod:`properties.smt`."""

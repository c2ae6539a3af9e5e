"""The search driver and its engines: the breadth-first driver and the transition-system
contract (:mod:`.bfs`), its fingerprint store (:mod:`.store`), checkpoints (:mod:`.checkpoint`),
the Dask engine (:mod:`.dask_engine`); the transition systems, one a module (every reading in one
sweep, :mod:`.system_sweep`, with its memo tables, :mod:`.sweep_cache`, and numpy blocks,
:mod:`.blocks`; one reading, :mod:`.system_single`; two readings, :mod:`.system_pair`) and what
they share (:mod:`.move_table`, :mod:`.reading_classes`); the ``explore`` entry point
(:mod:`.explore`), its report (:mod:`.report`) and state graph (:mod:`.graph`); the Hypothesis
state machines (:mod:`.machines`) and the ambiguity search (:mod:`.ambiguity`). Z3 bounded model
checking is beside it in :mod:`properties.smt`. ``docs/search.md`` describes the contract."""

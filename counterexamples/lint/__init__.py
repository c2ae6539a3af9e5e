"""The producer linter (``activity-check lint``): the rules and the report (:mod:`.linter`), the
readers of files, folders, stdin and SSE (:mod:`.inputs`), the output formats (:mod:`.formats`) and
the helper for a producer team's pytest suite (:mod:`.pytest_helper`)."""

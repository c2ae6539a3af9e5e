"""The field's conformance corpus (AG-UI's ``spec/draft/conformance``): reading fixtures
(:mod:`.fixtures`), running them against the model or any adapter and judging each ``expect``
key (:mod:`.runner`), what the model covers of the official corpus (:mod:`.scope`), and
generating the activity corpus the field lacks (:mod:`.generate`). See docs/conformance.md."""

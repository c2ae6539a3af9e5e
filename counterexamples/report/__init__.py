"""What the tool writes for people and other tools: the export formats of a finding or trace
(:mod:`.export`), the questions page (:mod:`.questions_page`) and the walkthroughs the notebooks show
(:mod:`.walkthrough`)."""

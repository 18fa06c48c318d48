"""The run log: the records every layer passes around (:mod:`skate.runlog.records`), the typed
events of ``events.jsonl`` and reading them back (:mod:`skate.runlog.events`), and the run folder's
files written and read (:mod:`skate.runlog.files`: the event log, ``ratings.json``, the table)."""

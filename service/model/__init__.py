"""One run from parse to storage (SPEC §3, §8): the types every input is converted to once and every
layer after the receivers speaks.

- `RunHeader`: a run's own fields (id, identity, kind, suite, task, trial, metadata, profile, parent),
  whatever it came from: a posted run, a streamed run, a log session, a trace's agent.
- `RunMaterial`: what a finalize judges: the header, the events normalized once (`diagnosis.Event`),
  each serialized once (`payloads`, which the store writes and the repost check hashes), the caller's
  execution object, and what telemetry adds (the spans' times, a session's score).
- `RunRecord`: a stored version of a run (the `runs` table, a row per version), `RunSummary` the part
  of it that lists show; the SQL column lists and the projections' columns derive from their fields
  (`RUN_COLUMNS`, `SUMMARY_COLUMNS`).
"""

from service.model.header import RunHeader
from service.model.material import RunMaterial, content_hash
from service.model.record import RUN_COLUMNS, SUMMARY_COLUMNS, RunRecord, RunSummary, RunView, next_version

__all__ = [
    "RUN_COLUMNS",
    "SUMMARY_COLUMNS",
    "RunHeader",
    "RunMaterial",
    "RunRecord",
    "RunSummary",
    "RunView",
    "content_hash",
    "next_version",
]

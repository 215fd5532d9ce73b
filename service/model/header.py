"""A run's own fields (SPEC §3.1 run fields, §3.5 parent, §4.1 profile), read the same for every input."""

from dataclasses import dataclass, field
from typing import Any

from service.vocab import RunKind

# The fields a run posted again under its id must repeat (a run_id names one run).
COMPARED = ("identity", "suite", "task_id", "trial", "metadata", "profile", "parent_run_id")


@dataclass(frozen=True)
class RunHeader:
    identity: str
    run_id: str | None = None  # given by the receiver when the input names none
    suite: str = ""
    task_id: str = ""
    trial: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    kind: str = RunKind.RUN
    profile: str = ""  # the diagnosis profile the run names itself, '' when none
    parent_run_id: str = ""  # '' when none

"""The public shapes of a run (the API's responses and `repute runs --json`) and the list cursors.

A run that ended in an execution error has no quality verdict: its trust, readiness and primary failure
read as null (the infrastructure failed, not the agent), while its diagnosis stays in the detail for
whoever debugs the harness. The detail names the diagnosis profile that judged the run and its
thresholds (SPEC §4.1: a diagnosis that records none was judged under `critiqor`).

Every list pages the same way: `cursor` in, `next_cursor` out (null on the last page). A cursor is
opaque to clients; it names its list, so one list's cursor is refused by another.
"""

import base64
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson

from service.diagnosis import recorded_profile
from service.errors import FieldError
from service.model import RunRecord, RunView
from service.vocab import ExecutionStatus

_SUMMARY_FIELDS = (
    "run_id", "identity", "kind", "suite", "task_id", "trial", "status", "run_at", "finalized_at",
    "execution_status", "failure_stage", "failure_reason_code", "score", "session_composite",
    "event_count", "tool_calls", "total_tokens", "cost_usd", "started_at", "ended_at",
)  # fmt: skip


def _loads(text: str) -> Any:
    return orjson.loads(text) if text else None


def has_verdict(record: RunView) -> bool:
    """Whether the run was judged: finalized, and not stopped by its infrastructure."""
    return record.finalized and record.execution_status != ExecutionStatus.EXECUTION_ERROR


def run_summary(record: RunView) -> dict[str, Any]:
    judged = has_verdict(record)
    return {
        **{name: getattr(record, name) for name in _SUMMARY_FIELDS},
        "trust_score": record.trust_score if judged else None,
        "readiness_level": record.readiness if judged else None,
        "primary_failure": (record.primary_failure or None) if judged else None,
        "parent_run_id": record.parent_run_id or None,
        "duration_seconds": duration_seconds(record),
    }


def duration_seconds(record: RunView) -> float | None:
    """How long the run ran, from its first event (or span) to its last; None when it names no time."""
    if record.started_at is None or record.ended_at is None:
        return None
    return (record.ended_at - record.started_at).total_seconds()


CHILD_FIELDS = ("run_id", "identity", "status", "execution_status", "trust_score", "readiness_level")


def run_detail(record: RunRecord, children: Sequence[RunView] = ()) -> dict[str, Any]:
    """A run with its diagnosis, and the verdicts of its child runs (SPEC §3.5)."""
    diagnosis = _loads(record.diagnosis)
    return {
        **run_summary(record),
        "child_runs": [{name: summary[name] for name in CHILD_FIELDS} for summary in map(run_summary, children)],
        "metadata": _loads(record.metadata) or {},
        "failure_message": record.failure_message,
        "diagnosis": diagnosis,
        "profile": None if diagnosis is None else recorded_profile(diagnosis).to_dict(),
        "session_performance": _loads(record.session_performance),
    }


def _encode(kind: str, *values: Any) -> str:
    return base64.urlsafe_b64encode(orjson.dumps([kind, *values])).decode().rstrip("=")


def _decode(kind: str, cursor: str) -> list[Any]:
    try:
        decoded = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, TypeError) as exc:
        raise _not_ours() from exc
    if not isinstance(decoded, list) or not decoded or decoded[0] != kind:
        raise _not_ours()
    return decoded[1:]


def _not_ours() -> FieldError:
    return FieldError("query.cursor", "cursor is not one this list returned")


def encode_cursor(record: RunView) -> str:
    """The runs list after `record` (newest first: by run time, then id)."""
    return _encode("runs", int(record.run_at.timestamp() * 1000), record.run_id)


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        at_ms, run_id = _decode("runs", cursor)
        return datetime.fromtimestamp(int(at_ms) / 1000, tz=UTC), str(run_id)
    except (ValueError, TypeError, OverflowError, OSError) as exc:
        raise _not_ours() from exc


def position_cursor(kind: str, position: int) -> str:
    """A list that pages by position (a run's events by sequence number, the fleet by rank)."""
    return _encode(kind, position)


def position_of(kind: str, cursor: str | None) -> int:
    if cursor is None:
        return 0
    values = _decode(kind, cursor)
    if len(values) != 1 or isinstance(values[0], bool) or not isinstance(values[0], int) or not 0 <= values[0] < 2**31:
        raise _not_ours()
    return values[0]

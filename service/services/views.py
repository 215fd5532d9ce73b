"""The public shapes of a run (the API's responses and `repute runs --json`) and the list cursor."""

import base64
from datetime import UTC, datetime
from typing import Any

import orjson

from service.errors import FieldError
from service.store.records import RunRecord

_SUMMARY_FIELDS = (
    "run_id", "identity", "kind", "suite", "task_id", "trial", "status", "run_at", "finalized_at",
    "execution_status", "failure_stage", "failure_reason_code", "score", "trust_score", "session_composite",
    "event_count", "tool_calls", "total_tokens",
)  # fmt: skip


def _loads(text: str) -> Any:
    return orjson.loads(text) if text else None


def run_summary(record: RunRecord) -> dict[str, Any]:
    return {
        **{name: getattr(record, name) for name in _SUMMARY_FIELDS},
        "readiness_level": record.readiness,
        "primary_failure": record.primary_failure or None,
    }


def run_detail(record: RunRecord) -> dict[str, Any]:
    return {
        **run_summary(record),
        "metadata": _loads(record.metadata) or {},
        "failure_message": record.failure_message,
        "started_at": record.started_at,
        "ended_at": record.ended_at,
        "diagnosis": _loads(record.diagnosis),
        "session_performance": _loads(record.session_performance),
    }


def encode_cursor(record: RunRecord) -> str:
    at_ms = int(record.run_at.timestamp() * 1000)
    return base64.urlsafe_b64encode(orjson.dumps([at_ms, record.run_id])).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        at_ms, run_id = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        return datetime.fromtimestamp(int(at_ms) / 1000, tz=UTC), str(run_id)
    except (ValueError, TypeError, OverflowError, OSError) as exc:
        raise FieldError("query.cursor", "cursor is not one this API returned") from exc

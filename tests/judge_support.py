"""Shared helpers of the judge tests: the OTLP fixture, variants of it, and records built by hand."""

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from service.judge import LogRecord, decode_json_body, group_by_session
from tests.conftest import FIXTURES

OTLP_LOG = FIXTURES / "otlp_claude_code.jsonl"
SESSIONS = ("sess-a1", "sess-b2")
NANOS_PER_SECOND = 10**9

Request = dict[str, Any]
RecordEdit = Callable[[dict[str, Any]], None]


def expected_yaml(session: str) -> str:
    return (FIXTURES / f"otlp_claude_code.{session}.expected.yaml").read_text()


def fixture_lines() -> list[bytes]:
    return [line for line in OTLP_LOG.read_bytes().splitlines() if line.strip()]


def fixture_session(session: str) -> list[LogRecord]:
    """The decoded records of one session of the fixture log."""
    records = [item for line in fixture_lines() for item in decode_json_body(line).records]
    return group_by_session(records)[session]


def fixture_requests() -> list[Request]:
    return [orjson.loads(line) for line in fixture_lines()]


def raw_records(request: Request) -> Iterator[dict[str, Any]]:
    for resource_logs in request["resourceLogs"]:
        for scope_logs in resource_logs["scopeLogs"]:
            yield from scope_logs["logRecords"]


def edited_fixture(edit: RecordEdit) -> list[Request]:
    requests = copy.deepcopy(fixture_requests())
    for request in requests:
        for record in raw_records(request):
            edit(record)
    return requests


def write_jsonl(requests: list[Request], path: Path) -> Path:
    path.write_bytes(b"".join(orjson.dumps(request) + b"\n" for request in requests))
    return path


def attribute_values(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The record's attributes as key -> OTLP AnyValue (the same objects: edits show in the record)."""
    return {pair["key"]: pair["value"] for pair in record["attributes"]}


def record(
    name: str | None,
    second: int | None = 0,
    session_id: str = "s",
    resource: dict[str, Any] | None = None,
    **attributes: Any,
) -> LogRecord:
    """A decoded record, as the decoders would give it."""
    return LogRecord(
        second * NANOS_PER_SECOND if second is not None else None,
        name,
        session_id,
        {"session.id": session_id, **attributes},
        resource if resource is not None else {},
    )

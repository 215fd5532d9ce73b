"""`repute ingest`: session files (any §3.1 encoding), directories of them, and OTLP JSONL files.
Runs go to the API in batches; a bad file is reported and skipped, never fatal to the batch."""

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.progress import Progress

from service.client.api import ApiClient
from service.diagnosis import parse_run
from service.errors import ClientError
from service.judge import OTLPDecodeError, decode_json_body
from service.services.inputs import SessionInput, session_input

SESSION_SUFFIXES = {".json", ".jsonl", ".ndjson"}


@dataclass
class IngestSummary:
    files: int = 0
    stored: int = 0
    existing: int = 0
    failed: int = 0

    def line(self) -> str:
        return (
            f"{self.files} files: {self.stored} runs stored, {self.existing} already present, "
            f"{self.failed} files failed"
        )

    def count(self, created: bool) -> None:
        if created:
            self.stored += 1
        else:
            self.existing += 1


def expand(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SESSION_SUFFIXES)
        else:
            yield path


def _is_otlp(head: bytes) -> bool:
    return b'"resourceLogs"' in head[:4096]


def session_of(data: bytes, identity: str | None) -> SessionInput:
    """A session file validated here, so a bad file is skipped before it can fail a batch."""
    run = parse_run(data)
    if run.identity is None and identity:
        run = replace(run, identity=identity)
    if run.run_id is None:
        # Named by content, so ingesting the same file again finds the stored run.
        run = replace(run, run_id=f"run_{hashlib.sha256(data).hexdigest()[:32]}")
    return session_input(run)


def _body(session: SessionInput) -> dict[str, Any]:
    spec = session.spec
    return {
        "run_id": spec.run_id,
        "identity": spec.identity,
        "suite": spec.suite or None,
        "task_id": spec.task_id or None,
        "trial": spec.trial,
        "metadata": spec.metadata,
        "execution": session.execution,
        "events": session.events,
    }


def post_sessions(client: ApiClient, sessions: list[SessionInput]) -> list[bool]:
    """Stores and finalizes the runs in one request; whether each was created (False: already stored)."""
    answer = client.json("POST", "/v1/sessions/batch", content=orjson.dumps([_body(s) for s in sessions]))
    return [result["created"] for result in answer["results"]]


def post_otlp_file(client: ApiClient, path: Path) -> list[bool]:
    """Through /v1/logs like any OTLP emitter, then finalize each session that was stored."""
    session_ids: dict[str, None] = {}
    with path.open("rb") as lines:
        for line in lines:
            if not line.strip():
                continue
            for record in decode_json_body(line).records:
                if record.session_id:
                    session_ids.setdefault(record.session_id)
            client.request("POST", "/v1/logs", content=line, headers={"content-type": "application/json"})
    created = []
    for session_id in session_ids:
        stored = client.json("GET", f"/v1/runs/{session_id}")
        if stored is None:  # every record of the session was rejected
            continue
        client.request("POST", f"/v1/runs/{session_id}/finalize")
        created.append(stored["status"] == "open")
    return created


def ingest_paths(
    client: ApiClient, paths: list[Path], identity: str | None, batch_size: int, out: Console, err: Console
) -> IngestSummary:
    summary = IngestSummary()
    pending: list[SessionInput] = []

    def flush() -> None:
        for created in post_sessions(client, pending):
            summary.count(created)
        pending.clear()

    files = list(expand(paths))
    with Progress(console=out, transient=True) as progress:
        task = progress.add_task("ingesting", total=len(files))
        for path in files:
            summary.files += 1
            try:
                data = path.read_bytes()
                if _is_otlp(data):
                    for created in post_otlp_file(client, path):
                        summary.count(created)
                else:
                    pending.append(session_of(data, identity))
            except (OSError, OTLPDecodeError, ClientError) as exc:
                summary.failed += 1
                field = getattr(exc, "field", "")
                where = f" ({field})" if field else ""
                err.print(f"skipped {path}{where}: {exc}", markup=False, highlight=False)
            if len(pending) >= batch_size:
                flush()
            progress.advance(task)
        if pending:
            flush()
    return summary

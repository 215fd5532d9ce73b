"""`repute ingest`: session files (any §3.1 encoding), directories of them, and the OTLP Collector file
exporter's JSONL of logs (Claude Code sessions) or traces (GenAI spans).
Runs go to the API in batches; a bad file is reported and skipped, never fatal to the batch."""

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.progress import Progress

from service.client.api import ApiClient, ApiError
from service.diagnosis import parse_run
from service.errors import ClientError
from service.judge import OTLPDecodeError, decode_json_body
from service.services.inputs import SessionInput, session_input
from service.traces import decode_json_traces, group_runs

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


def _otlp_signal(head: bytes) -> str | None:
    """'logs' or 'traces' for a Collector file-exporter file, else None (a session file)."""
    for key, signal in ((b'"resourceLogs"', "logs"), (b'"resourceSpans"', "traces")):
        if key in head[:4096]:
            return signal
    return None


def _run_ids(signal: str, line: bytes) -> list[str]:
    """The runs a line of OTLP feeds, as the server groups them (SPEC §3.2 sessions, §3.4 traces)."""
    if signal == "logs":
        return [record.session_id for record in decode_json_body(line).records if record.session_id]
    return list(group_runs(decode_json_traces(line).spans))


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


def post_otlp_file(client: ApiClient, path: Path, signal: str, advance: Callable[[int], None]) -> list[bool]:
    """Through /v1/logs or /v1/traces like any OTLP emitter, line by line, then finalize each run stored."""
    run_ids: dict[str, None] = {}
    with path.open("rb") as lines:
        for line in lines:
            advance(len(line))
            if not line.strip():
                continue
            run_ids.update(dict.fromkeys(_run_ids(signal, line)))
            client.request("POST", f"/v1/{signal}", content=line, headers={"content-type": "application/json"})
    created = []
    for run_id in run_ids:
        stored = client.json("GET", f"/v1/runs/{run_id}")
        if stored is None:  # everything of the run was rejected
            continue
        client.request("POST", f"/v1/runs/{run_id}/finalize")
        created.append(stored["status"] == "open")
    return created


# Answers about the runs themselves (a conflicting re-post, a run the API refuses): that file fails, not the ingest.
_REFUSED_RUN = {409, 413, 422}


class _Ingest:
    """Files in, runs out: session files in batches, OTLP files line by line; a file that fails is
    reported on `err` and counted, and the others go on."""

    def __init__(self, client: ApiClient, identity: str | None, err: Console) -> None:
        self.client, self.identity, self.err = client, identity, err
        self.summary = IngestSummary()
        self.pending: list[tuple[Path, SessionInput]] = []

    def add(self, path: Path, progress: Progress) -> None:
        self.summary.files += 1
        try:
            with path.open("rb") as head:
                signal = _otlp_signal(head.read(4096))
            if signal:
                lines = progress.add_task(path.name, total=path.stat().st_size)
                for created in post_otlp_file(self.client, path, signal, partial(progress.advance, lines)):
                    self.summary.count(created)
                progress.remove_task(lines)
            else:
                self.pending.append((path, session_of(path.read_bytes(), self.identity)))
        except (OSError, OTLPDecodeError, ClientError) as exc:
            self.skip(path, exc, getattr(exc, "field", ""))

    def skip(self, path: Path, exc: Exception, field: str = "") -> None:
        self.summary.failed += 1
        where = f" ({field})" if field else ""
        self.err.print(f"skipped {path}{where}: {exc}", markup=False, highlight=False)

    def flush(self) -> None:
        """Posts the pending runs as one batch; when the API refuses the batch for one of its runs (it is
        all or nothing), each run again on its own, so only the files at fault fail."""
        batch, self.pending = self.pending, []
        try:
            results = post_sessions(self.client, [session for _, session in batch])
        except ApiError as exc:
            if exc.status not in _REFUSED_RUN:
                raise
            if len(batch) == 1:
                self.skip(batch[0][0], exc)
                return
            for one in batch:
                self.pending = [one]
                self.flush()
            return
        for created in results:
            self.summary.count(created)


def ingest_paths(
    client: ApiClient, paths: list[Path], identity: str | None, batch_size: int, err: Console
) -> IngestSummary:
    ingest = _Ingest(client, identity, err)
    files = list(expand(paths))
    with Progress(console=err, transient=True) as progress:
        task = progress.add_task("ingesting", total=len(files))
        for path in files:
            ingest.add(path, progress)
            if len(ingest.pending) >= batch_size:
                ingest.flush()
            progress.advance(task)
        if ingest.pending:
            ingest.flush()
    return ingest.summary

"""`repute ingest`: session files (any §3.1 encoding), directories of them, the OTLP Collector file
exporter's JSONL of logs (Claude Code sessions) or traces (GenAI spans), an OTLP/JSON document (Tempo's
exports included), and trace exports of other formats: a Jaeger query-API export, OTel SDK spans as
frameworks save them, a Langfuse trace export (SPEC §3.4 "Other trace formats"), converted to spans and
sent as OTLP. Runs go to the API in batches; a bad file is reported and skipped, never fatal to the batch.
The summary keeps each run's verdict as the API answered it, for the CLI to list."""

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import orjson
from rich.console import Console
from rich.progress import Progress

from service.client.api import ApiClient, ApiError
from service.diagnosis import parse_run
from service.judge import OTLPDecodeError, decode_json_body
from service.model import RunMaterial
from service.otlp.shapes import describe
from service.services.inputs import material_of
from service.traces import DecodedSpans, decode_json_traces, group_runs
from service.traces.formats import read_document, spans_of, spans_of_lines
from service.traces.otlp_json import encode_json_traces
from service.vocab import RunStatus

SESSION_SUFFIXES = {".json", ".jsonl", ".ndjson"}
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024  # the server's default body limit


@dataclass
class IngestSummary:
    files: int = 0
    stored: int = 0
    existing: int = 0
    failed: int = 0
    # Each run stored or found, as GET /v1/runs lists it, with `created` (False: it was already stored).
    runs: list[dict[str, Any]] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{_count(self.files, 'file')}: {_count(self.stored, 'run')} stored, {self.existing} already present, "
            f"{_count(self.failed, 'file')} failed"
        )

    def add(self, run: dict[str, Any]) -> None:
        self.runs.append(run)
        if run["created"]:
            self.stored += 1
        else:
            self.existing += 1


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def expand(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SESSION_SUFFIXES)
        else:
            yield path


LOGS, TRACES, SPANS = "logs", "traces", "spans"
_SIGNAL_KEYS = (
    (b'"resourceLogs"', LOGS), (b'"resourceSpans"', TRACES), (b'"batches"', TRACES), (b'"traceID"', SPANS),
    (b'"span_id"', SPANS), (b'"start_time"', SPANS),
)  # fmt: skip
SPANS_PER_REQUEST = 1000


# A Langfuse export opens with its `trace` (the UI's download) or holds `observations` early.
_LANGFUSE_HEAD = re.compile(rb'^\s*\{\s*"trace"\s*:|"observations"\s*:\s*\[')


def _telemetry_kind(head: bytes) -> str | None:
    """LOGS or TRACES for OTLP, SPANS for trace exports of other formats; None for a session file."""
    head = head[:4096]
    found = next((kind for key, kind in _SIGNAL_KEYS if key in head), None)
    return found or (SPANS if _LANGFUSE_HEAD.search(head) else None)


def _run_ids(signal: str, line: bytes) -> list[str]:
    """The runs a document of OTLP feeds, as the server groups them (SPEC §3.2 sessions, §3.4 traces)."""
    if signal == LOGS:
        return [record.session_id for record in decode_json_body(line).records if record.session_id]
    return list(group_runs(decode_json_traces(line).spans))


def _documents(path: Path, max_bytes: int) -> Iterator[bytes]:
    """The file as one JSON document when it is one (a pretty-printed export), else its lines."""
    if path.stat().st_size <= max_bytes:
        data = path.read_bytes()
        try:
            orjson.loads(data)
        except orjson.JSONDecodeError:
            yield from data.splitlines()
        else:
            yield data
        return
    with path.open("rb") as lines:
        yield from lines


def _exported_spans(path: Path) -> DecodedSpans:
    """A Jaeger export or SDK spans, read by the file's shape (one document, or one span per line)."""
    data = path.read_bytes()
    try:
        return spans_of(read_document(data))
    except ValueError:
        pass
    try:
        return spans_of_lines(data.splitlines())
    except ValueError as error:
        raise OTLPDecodeError(f"neither one JSON document nor JSON lines: {error}") from None


def session_of(data: bytes, identity: str | None) -> RunMaterial:
    """A session file validated here, so a bad file is skipped before it can fail a batch."""
    run = parse_run(data)
    if run.identity is None and identity:
        run = replace(run, identity=identity)
    if run.run_id is None:
        # Named by content, so ingesting the same file again finds the stored run.
        run = replace(run, run_id=f"run_{hashlib.sha256(data).hexdigest()[:32]}")
    return material_of(run)


def _body(session: RunMaterial) -> dict[str, Any]:
    """The run as POST /v1/sessions/batch takes it: every field of its header (the profile and the parent
    it names included), its execution object and its events as read."""
    header = session.header
    return {
        "run_id": header.run_id,
        "identity": header.identity,
        "suite": header.suite or None,
        "task_id": header.task_id or None,
        "trial": header.trial,
        "metadata": header.metadata,
        "profile": header.profile or None,
        "parent_run_id": header.parent_run_id or None,
        "execution": session.execution,
        "events": session.raw_events,
    }


def post_sessions(client: ApiClient, sessions: list[RunMaterial]) -> list[dict[str, Any]]:
    """Stores and finalizes the runs in one request; each one's verdict, with whether it was created
    (False: already stored)."""
    answer = client.json("POST", "/v1/sessions/batch", content=orjson.dumps([_body(s) for s in sessions]))
    return [
        {**verdict, "identity": session.header.identity, "status": RunStatus.FINALIZED}
        for session, verdict in zip(sessions, answer["results"], strict=True)
    ]


def post_otlp_file(client: ApiClient, path: Path, signal: str, advance: Callable[[int], None]) -> list[dict[str, Any]]:
    """Through /v1/logs or /v1/traces like any OTLP emitter, document by document, then finalize each run."""
    run_ids: dict[str, None] = {}
    refusals: list[tuple[int, str]] = []
    for document in _documents(path, MAX_DOCUMENT_BYTES):
        advance(len(document))
        if not document.strip():
            continue
        run_ids.update(dict.fromkeys(_run_ids(signal, document)))
        _post_otlp(client, signal, document, refusals)
    return _finalized_unless_refused(client, list(run_ids), refusals, "spans" if signal == TRACES else "log records")


def post_exported_spans(client: ApiClient, path: Path, advance: Callable[[int], None]) -> list[dict[str, Any]]:
    """A trace export of another format, converted to spans and sent as OTLP/JSON, then each run finalized."""
    decoded = _exported_spans(path)
    if decoded.rejected_count:
        raise OTLPDecodeError(f"{decoded.rejected_count} spans cannot be read: {decoded.rejection_message()}")
    if not decoded.spans:
        raise OTLPDecodeError(f"no spans: the file looks like {describe(read_document(path.read_bytes()))}")
    refusals: list[tuple[int, str]] = []
    for start in range(0, len(decoded.spans), SPANS_PER_REQUEST):
        body = orjson.dumps(encode_json_traces(decoded.spans[start : start + SPANS_PER_REQUEST]))
        _post_otlp(client, TRACES, body, refusals)
    advance(path.stat().st_size)
    return _finalized_unless_refused(client, list(group_runs(decoded.spans)), refusals, "spans")


def finalize_runs(client: ApiClient, run_ids: list[str]) -> list[dict[str, Any]]:
    """Finalizes each run; each one's verdict, with whether it was new (False: already finalized). A run
    id that names no run (everything of it rejected, or its trace turned out to belong to a conversation)
    is skipped."""
    finalized = []
    for run_id in run_ids:
        stored = client.json("GET", f"/v1/runs/{run_id}")
        run = client.json("POST", f"/v1/runs/{run_id}/finalize")
        if run is not None:
            finalized.append({**run, "created": stored is None or stored["status"] == RunStatus.OPEN})
    return finalized


# Answers about the runs themselves (a conflicting re-post, a run the API refuses): that file fails, not the ingest.
_REFUSED_RUN = {409, 413, 422}
MAX_REASON_CHARS = 500


def _file_failed(error: Exception) -> bool:
    """Whether an error is about one file (it fails, the others go on): what reading or converting it raised
    (an export of an unexpected shape raises what Python raises: TypeError, KeyError, RecursionError...), or
    the API's refusal of what it holds (400, 409, 413, 422). The server unreachable, a key refused or a
    server error end the ingest."""
    if isinstance(error, ApiError):
        return error.status == 400 or error.status in _REFUSED_RUN
    return isinstance(error, OSError | ValueError | TypeError | KeyError | AttributeError | RecursionError)


class PartlyRefused(Exception):
    """The API stored part of a file's telemetry and refused the rest (OTLP `partialSuccess`): the runs of
    what it stored were finalized (`created`: their verdicts), and the file fails."""

    def __init__(self, message: str, created: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.created = created


def _refused_items(response: httpx.Response | None) -> tuple[int, str]:
    """The spans or log records an OTLP answer refused (`partialSuccess`), and why."""
    partial = (response.json() if response is not None and response.content else {}).get("partialSuccess") or {}
    refused = partial.get("rejectedSpans") or partial.get("rejectedLogRecords") or 0
    return int(refused), str(partial.get("errorMessage", ""))


def _post_otlp(client: ApiClient, signal: str, body: bytes, refusals: list[tuple[int, str]]) -> None:
    """One OTLP/JSON request; what its answer refused is added to `refusals`."""
    response = client.request("POST", f"/v1/{signal}", content=body, headers={"content-type": "application/json"})
    refused, why = _refused_items(response)
    if refused:
        refusals.append((refused, why))


def _finalized_unless_refused(
    client: ApiClient, run_ids: list[str], refusals: list[tuple[int, str]], unit: str
) -> list[dict[str, Any]]:
    """The runs finalized; PartlyRefused when the API refused some of the file's items."""
    created = finalize_runs(client, run_ids)
    if refusals:
        count = sum(refused for refused, _ in refusals)
        reasons = "; ".join(dict.fromkeys(why for _, why in refusals if why))
        raise PartlyRefused(f"{count} {unit} refused by the server: {reasons}", created)
    return created


class _Ingest:
    """Files in, runs out: session files in batches, OTLP files line by line; a file that fails is
    reported on `err` and counted, and the others go on."""

    def __init__(self, client: ApiClient, identity: str | None, err: Console) -> None:
        self.client, self.identity, self.err = client, identity, err
        self.summary = IngestSummary()
        self.pending: list[tuple[Path, RunMaterial]] = []

    def add(self, path: Path, progress: Progress) -> None:
        self.summary.files += 1
        try:
            with path.open("rb") as head:
                kind = _telemetry_kind(head.read(4096))
            if kind:
                task = progress.add_task(path.name, total=path.stat().st_size)
                advance = partial(progress.advance, task)
                posted = (
                    post_exported_spans(self.client, path, advance)
                    if kind == SPANS
                    else post_otlp_file(self.client, path, kind, advance)
                )
                for run in posted:
                    self.summary.add(run)
                progress.remove_task(task)
            else:
                self.pending.append((path, session_of(path.read_bytes(), self.identity)))
        except PartlyRefused as refused:
            for run in refused.created:
                self.summary.add(run)
            self.skip(path, refused)
        except Exception as exc:
            if not _file_failed(exc):
                raise
            self.skip(path, exc, getattr(exc, "field", ""))

    def skip(self, path: Path, exc: Exception, field: str = "") -> None:
        """The file counted as failed, and why, in one line."""
        self.summary.failed += 1
        where = f" ({field})" if field else ""
        reason = " ".join(str(exc).split())[:MAX_REASON_CHARS] or type(exc).__name__
        self.err.print(f"skipped {path}{where}: {reason}", markup=False, highlight=False, soft_wrap=True)

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
        for run in results:
            self.summary.add(run)


def ingest_paths(
    client: ApiClient, paths: list[Path], identity: str | None, batch_size: int, err: Console
) -> IngestSummary:
    ingest = _Ingest(client, identity, err)
    files = list(expand(paths))
    with Progress(console=err, transient=True, disable=not err.is_terminal) as progress:  # no bar in a log
        task = progress.add_task("ingesting", total=len(files))
        for path in files:
            ingest.add(path, progress)
            if len(ingest.pending) >= batch_size:
                ingest.flush()
            progress.advance(task)
        if ingest.pending:
            ingest.flush()
    return ingest.summary

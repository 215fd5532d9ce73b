"""`repute ingest`: session files (any §3.1 encoding), directories of them, and OTLP JSONL files.
Runs go to the backend in batches; a bad file is reported and skipped, never fatal to the batch."""

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from service.backend import Backend
from service.diagnosis import InputError, parse_run
from service.ids import FieldError
from service.judge import OTLPDecodeError
from service.runs import RunTooLarge, SessionInput, session_input

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


def expand(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SESSION_SUFFIXES)
        else:
            yield path


def _is_otlp(head: bytes) -> bool:
    return b'"resourceLogs"' in head[:4096]


def session_of(data: bytes, identity: str | None) -> SessionInput:
    run = parse_run(data)
    if run.identity is None and identity:
        run = replace(run, identity=identity)
    if run.run_id is None:
        # Named by content, so ingesting the same file again finds the stored run.
        run = replace(run, run_id=f"run_{hashlib.sha256(data).hexdigest()[:32]}")
    return session_input(run)


def ingest_paths(
    backend: Backend, paths: list[Path], identity: str | None, batch_size: int, out: Console, err: Console
) -> IngestSummary:
    summary = IngestSummary()
    pending: list[SessionInput] = []

    def count(records: list[dict]) -> None:
        for record in records:
            if record["created"]:
                summary.stored += 1
            else:
                summary.existing += 1

    def flush() -> None:
        count(backend.ingest(pending))
        pending.clear()

    files = list(expand(paths))
    with Progress(console=out, transient=True) as progress:
        task = progress.add_task("ingesting", total=len(files))
        for path in files:
            summary.files += 1
            try:
                data = path.read_bytes()
                if _is_otlp(data):
                    count(backend.ingest_otlp_file(path, identity))
                else:
                    pending.append(session_of(data, identity))
            except (OSError, InputError, OTLPDecodeError, FieldError, RunTooLarge) as exc:
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

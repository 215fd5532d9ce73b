"""Judging a Collector file-exporter log (one ExportLogsServiceRequest JSON object per line).

Two streaming passes; memory stays flat whatever the file size:
1. index: every line is decoded and validated, and only each session's start and record count kept;
2. score: the chosen session's records are accumulated. A line that does not contain the session
   id's text cannot hold them and is skipped undecoded; should the count differ from the index's (an
   encoder that escaped the id), the pass runs again without skipping.
Turning records into `LogRecord`s is the expensive part of decoding; the index avoids it, so a log of
many sessions costs little more than one validating parse.

Each pass cuts a large file into byte ranges (a range owns the lines that start in it) scanned by
worker processes, and merges their results in file order: exactly the single-process result.
"""

import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Generic, Protocol, Self, TypeVar

from service.judge.identity import DEFAULT_IDENTITY_ATTRIBUTES, IdentityRule
from service.judge.otlp_json import decode_json_body, session_times
from service.judge.score import SessionAccumulator, SessionScore
from service.judge.sessions import SessionIndex
from service.otlp.attributes import OTLPDecodeError

MIN_RANGE_BYTES = 8 * 1024 * 1024
RANGES_PER_WORKER = 4  # several per worker, so that a worker slowed down does not hold up the end
SESSIONS_NAMED_IN_ERRORS = 5
# Characters some JSON encoders escape (Go: <>&, PHP: /); an id made only of other printable ASCII
# appears verbatim in any line that holds it.
SOMETIMES_ESCAPED = frozenset('"\\/<>&')


class SessionNotFound(LookupError):
    """The log has no session of that id, or no session at all."""


@dataclass(frozen=True)
class FileJudgement:
    score: SessionScore
    sessions: int
    rejected: int
    unsessioned: int


def judge_log_file(
    path: str | Path,
    session_id: str | None = None,
    *,
    masque: str | None = None,
    identity_attributes: Sequence[str] = DEFAULT_IDENTITY_ATTRIBUTES,
    workers: int | None = None,
) -> FileJudgement:
    """Score `session_id`, by default the session that started last; `workers` defaults to the CPU
    count. Raises OSError when the file cannot be read, OTLPDecodeError (naming the line) when a line
    is malformed, SessionNotFound."""
    index = index_log_file(path, workers)
    chosen = _choose(index, session_id, path)
    rule = IdentityRule(identity_attributes)
    session = accumulate_log_session(path, chosen, rule, workers)
    if session.records != index.sessions[chosen].records:
        session = accumulate_log_session(path, chosen, rule, workers, skip_lines_without_id=False)
    return FileJudgement(session.score(masque), len(index.sessions), index.rejected, index.unsessioned)


def index_log_file(path: str | Path, workers: int | None = None) -> SessionIndex:
    """Pass 1: every session's start and record count; validates every line."""
    return _fold_ranges(path, _IndexPass(), workers)


def accumulate_log_session(
    path: str | Path,
    session_id: str,
    identity_rule: IdentityRule,
    workers: int | None = None,
    *,
    skip_lines_without_id: bool = True,
) -> SessionAccumulator:
    """Pass 2: the totals of one session's records."""
    verbatim = session_id.isascii() and session_id.isprintable() and SOMETIMES_ESCAPED.isdisjoint(session_id)
    needle = session_id.encode() if skip_lines_without_id and verbatim else b""
    return _fold_ranges(path, _SessionPass(session_id, identity_rule, needle), workers)


def _choose(index: SessionIndex, session_id: str | None, path: str | Path) -> str:
    if session_id is None:
        latest = index.latest()
        if latest is None:
            raise SessionNotFound(f"{path}: no session (no log record has a session.id attribute)")
        return latest
    if session_id not in index.sessions:
        known = ", ".join(list(index.sessions)[:SESSIONS_NAMED_IN_ERRORS]) or "none"
        raise SessionNotFound(f"{path}: no session {session_id!r} (sessions: {known})")
    return session_id


class _Mergeable(Protocol):
    def merge(self, later: Self) -> None: ...


StateT = TypeVar("StateT", bound=_Mergeable)


class _Pass(Protocol[StateT]):
    def start(self) -> StateT: ...

    def consume(self, state: StateT, line: bytes) -> None: ...


@dataclass(frozen=True)
class _IndexPass:
    def start(self) -> SessionIndex:
        return SessionIndex()

    def consume(self, index: SessionIndex, line: bytes) -> None:
        if not line.isspace():
            index.add(*session_times(line))


@dataclass(frozen=True)
class _SessionPass:
    session_id: str
    identity_rule: IdentityRule
    needle: bytes  # b"" reads every line

    def start(self) -> SessionAccumulator:
        return SessionAccumulator(self.session_id, self.identity_rule)

    def consume(self, session: SessionAccumulator, line: bytes) -> None:
        if self.needle not in line or line.isspace():
            return
        for record in decode_json_body(line).records:
            if record.session_id == self.session_id:
                session.add(record)


class _MalformedLine(Exception):
    """A line that is not an OTLP/JSON request, numbered within its range (picklable across processes)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(line, reason)
        self.line, self.reason = line, reason


@dataclass(frozen=True)
class _RangeTask(Generic[StateT]):
    path: str | Path
    start: int
    end: int
    scan: _Pass[StateT] = field(repr=False)


def _fold_ranges(path: str | Path, scan: _Pass[StateT], workers: int | None) -> StateT:
    size = os.path.getsize(path)
    workers = workers or os.cpu_count() or 1
    range_bytes = max(MIN_RANGE_BYTES, -(-size // (workers * RANGES_PER_WORKER)))
    tasks = [_RangeTask(path, start, min(start + range_bytes, size), scan) for start in range(0, size, range_bytes)]
    workers = min(workers, len(tasks))
    executor = ProcessPoolExecutor(workers) if workers > 1 else None
    total, lines_before = scan.start(), 0
    try:
        for state, lines in _run(executor, tasks):
            total.merge(state)
            lines_before += lines
    except _MalformedLine as error:
        raise OTLPDecodeError(f"{path}: line {lines_before + error.line}: {error.reason}") from None
    finally:
        if executor is not None:
            executor.shutdown(cancel_futures=True)
    return total


def _run(executor: Executor | None, tasks: list[_RangeTask[StateT]]) -> Iterable[tuple[StateT, int]]:
    return executor.map(_scan_range, tasks) if executor is not None else map(_scan_range, tasks)


def _scan_range(task: _RangeTask[StateT]) -> tuple[StateT, int]:
    """The range's state and its number of lines."""
    state = task.scan.start()
    number = 0
    with open(task.path, "rb") as stream:
        for number, line in enumerate(_lines_between(stream, task.start, task.end), 1):
            try:
                task.scan.consume(state, line)
            except OTLPDecodeError as error:
                raise _MalformedLine(number, str(error)) from None
    return state, number


def _lines_between(stream: BinaryIO, start: int, end: int) -> Iterator[bytes]:
    """The lines that start in [start, end)."""
    if start:
        stream.seek(start - 1)
        if stream.read(1) != b"\n":
            stream.readline()  # it started in the previous range
    position = stream.tell()
    for line in stream:
        if position >= end:
            return
        position += len(line)
        yield line

"""`repute record -- CMD ...`: run an agent's process and record what it prints as a run, the way
Critiqor's runtime observer does, so that a harness needs neither HTTP nor OTLP.

Every line the process prints, on stdout or stderr, is passed through to this process's stream of the same
name as it comes (unless `echo` is off: `repute record --quiet`) and becomes an event in the order it
arrived: a line that
is a JSON object is the agent's own event, kept as it is; any other line is a `process_output` event with
its `stream` and `text`. The recorder adds `process_start` (the command) before them and `process_end`
(exit code, duration) after them, each stamped with the time it saw it (it observed those itself; the
agent's own events keep exactly the times they carry). A process that exits non-zero, or that outlives
`--timeout` and is stopped, adds a staged `error_event` (stage `agent`; reason `nonzero_exit`, or
`budget_exceeded` for the time budget): the run is an execution error (SPEC §6), which no gate passes.
"""

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

STAGE = "agent"
NONZERO_EXIT = "nonzero_exit"
TIME_BUDGET = "budget_exceeded"
STOP_GRACE_SECONDS = 5  # after SIGTERM, before SIGKILL
MAX_LINE_CHARS = 100_000  # a longer output line is kept cut, with a note


class CannotStart(Exception):
    """The command could not be started at all (not found, not executable)."""


@dataclass
class Recording:
    command: list[str]
    events: list[dict[str, Any]] = field(default_factory=list)
    exit_code: int | None = None
    timed_out: bool = False
    duration_ms: int = 0

    @property
    def failed(self) -> bool:
        return self.timed_out or self.exit_code != 0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def event_of_line(line: str, stream: str, seen_at: str) -> dict[str, Any] | None:
    """The event a printed line stands for; None for a blank line."""
    text = line.rstrip("\r\n")
    if not text.strip():
        return None
    if text.lstrip().startswith("{"):
        try:
            found = orjson.loads(text)
        except orjson.JSONDecodeError:
            found = None
        if isinstance(found, dict):
            return found
    if len(text) > MAX_LINE_CHARS:
        text = text[:MAX_LINE_CHARS] + f" … ({len(text) - MAX_LINE_CHARS} more characters)"
    return {"event": "process_output", "timestamp": seen_at, "stream": stream, "text": text}


def _read_lines(
    pipe: IO[bytes], stream: str, lines: "queue.Queue[tuple[str, str, str]]", echo: IO[bytes] | None
) -> None:
    for raw in iter(pipe.readline, b""):
        lines.put((raw.decode("utf-8", errors="replace"), stream, _now()))
        if echo is not None:
            echo.write(raw)
            echo.flush()


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process's group (the agent and what it started), then SIGKILL after a grace."""
    for sent in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sent)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=STOP_GRACE_SECONDS)
            return
        except subprocess.TimeoutExpired:
            continue


def _finish_reading(process: subprocess.Popen[bytes], readers: list[threading.Thread]) -> None:
    """Waits for the output to end; what the process left running that still holds its output open (a
    daemon it started) is stopped after a grace."""
    for reader in readers:
        reader.join(timeout=STOP_GRACE_SECONDS)
    if any(reader.is_alive() for reader in readers):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        for reader in readers:
            reader.join()


def record_process(command: list[str], timeout: float | None, echo: bool = True) -> Recording:
    """Runs `command` (its stdin is this process's) and records it, passing its output through as it comes
    when `echo` (a Python agent is run unbuffered, so its lines come as it prints them); raises CannotStart."""
    recording = Recording(command)
    started = time.monotonic()
    start_event = {"event": "process_start", "timestamp": _now(), "command": command}
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    try:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=environment
        )
    except OSError as exc:
        raise CannotStart(f"cannot run {command[0]}: {exc.strerror or exc}") from exc
    recording.events.append({**start_event, "pid": process.pid})
    lines: queue.Queue[tuple[str, str, str]] = queue.Queue()
    pipes = ((process.stdout, "stdout", sys.stdout), (process.stderr, "stderr", sys.stderr))
    readers = [
        threading.Thread(target=_read_lines, args=(pipe, name, lines, ours.buffer if echo else None), daemon=True)
        for pipe, name, ours in pipes
    ]
    for reader in readers:
        reader.start()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        recording.timed_out = True
        _stop(process)
    recording.exit_code = process.wait()
    _finish_reading(process, readers)
    while not lines.empty():
        event = event_of_line(*lines.get())
        if event is not None:
            recording.events.append(event)
    recording.duration_ms = round((time.monotonic() - started) * 1000)
    recording.events.extend(_ending(recording, timeout))
    return recording


def _ending(recording: Recording, timeout: float | None) -> list[dict[str, Any]]:
    ended_at = _now()
    end = {"event": "process_end", "timestamp": ended_at, "exit_code": recording.exit_code,
           "duration_ms": recording.duration_ms, "timed_out": recording.timed_out}  # fmt: skip
    if not recording.failed:
        return [end]
    if recording.timed_out:
        reason, message = TIME_BUDGET, f"stopped after the time budget of {timeout:g} s (--timeout)"
    else:
        reason, message = NONZERO_EXIT, f"the process exited with code {recording.exit_code}"
    error = {"event": "error_event", "timestamp": ended_at, "error": reason, "stage": STAGE, "reason": reason,
             "message": message, "exit_code": recording.exit_code}  # fmt: skip
    return [error, end]


def default_identity(command: list[str]) -> str:
    """The name of what was run: the first argument naming a file (`python agent.py` is `agent`), else
    the program's (`claude -p ...` is `claude`)."""
    script = next((arg for arg in command[1:] if not arg.startswith("-") and Path(arg).is_file()), None)
    return Path(script or command[0]).stem or "agent"


def run_body(recording: Recording, identity: str, suite: str | None) -> dict[str, Any]:
    """The run as POST /v1/sessions takes it."""
    body: dict[str, Any] = {
        "identity": identity,
        "metadata": {"recorded_by": "repute record", "command": " ".join(recording.command)},
        "events": recording.events,
    }
    return body | ({"suite": suite} if suite else {})

"""A real uvicorn server on a loopback port, in a thread of the test process (sharing its store)."""

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import httpx
import uvicorn
from fastapi import FastAPI


def wait_until(condition: Callable[[], bool], attempts: int = 300, interval: float = 0.1) -> bool:
    """Polls `condition` up to `attempts` times, `interval` seconds apart; whether it came true. A
    bound on waiting, never a speed assertion."""
    for _ in range(attempts):
        if condition():
            return True
        time.sleep(interval)
    return condition()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# A test's client may sit idle for seconds between two of its requests (another client's rebuild in between):
# with uvicorn's default of 5 s the server closes the idle connection, and a request sent as it closes is
# reset (ECONNRESET). Idle connections are kept as long as a test client waits for an answer.
KEEP_ALIVE_SECONDS = 120


@contextmanager
def serve_in_thread(app: FastAPI) -> Iterator[str]:
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", timeout_keep_alive=KEEP_ALIVE_SECONDS
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    if not wait_until(lambda: server.started or not thread.is_alive(), attempts=1500, interval=0.02):
        raise RuntimeError("uvicorn did not start")
    if not server.started:
        raise RuntimeError("uvicorn stopped while starting")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def start_server_process(data_dir: Path, port: int, cwd: Path | None = None, **settings: str) -> subprocess.Popen:
    """`repute serve` in its own process (its own store), ready when this returns, run in `cwd` (default:
    this process's; where it reads a `.env` file). Its temporary files and its output (`server_log`) go
    beside the store: the driver spools each INSERT through a temporary file, and a server killed
    mid-insert leaves it."""
    command = ["-m", "service", "serve", "--port", str(port)]
    return _start_process(command, data_dir, port, "/readyz", settings, cwd)


def start_app_process(data_dir: Path, port: int, **settings: str) -> subprocess.Popen:
    """The app of a `repute serve --workers N` worker (`service.server:worker_app`) in its own process:
    it opens its store on first need, so it starts, and answers /healthz, while the store is unavailable
    (another process owns it, or the ClickHouse server is down). Live when this returns."""
    command = ["-m", "uvicorn", "service.server:worker_app", "--factory", "--port", str(port)]
    return _start_process(command, data_dir, port, "/healthz", settings)


def _start_process(
    command: list[str], data_dir: Path, port: int, ready_path: str, settings: dict[str, str], cwd: Path | None = None
) -> subprocess.Popen:
    temporary = data_dir.with_name(f"{data_dir.name}-tmp")
    temporary.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "TMPDIR": str(temporary),
        "REPUTE_DATA_DIR": str(data_dir),
        **{f"REPUTE_{k.upper()}": v for k, v in settings.items()},
    }
    # Its output goes to a file beside the store: a pipe nobody reads fills up, and then every thread
    # that logs (an access line, a failing sweep) blocks, so the server hangs instead of failing.
    log = server_log(data_dir)
    with log.open("ab") as output:
        process = subprocess.Popen([sys.executable, *command], env=env, stdout=output, stderr=output, cwd=cwd)
    answering = partial(_answers, f"http://127.0.0.1:{port}{ready_path}")
    if wait_until(lambda: answering() or process.poll() is not None, attempts=600) and process.poll() is None:
        return process
    if process.poll() is None:
        process.kill()
    raise RuntimeError(f"server did not become ready: {log.read_text()[-2000:]}")


def server_log(data_dir: Path) -> Path:
    """Where `start_server_process` writes the output of servers on `data_dir` (appended, start after start)."""
    return data_dir.with_name(f"{data_dir.name}-server.log")


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False

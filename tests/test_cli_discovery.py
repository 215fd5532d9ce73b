"""The CLI finds its server from any directory: a running server records itself per user (as well as in
its data directory), and a command run elsewhere uses it; REPUTE_URL / --url and REPUTE_DATA_DIR choose
another. A command that only reads never creates a store: where there is none it says so and exits 1."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from service.testing.live import free_port, start_server_process
from tests.conftest import FIXTURES

READS = (
    ("runs",), ("alerts",), ("reputation", "agent-atlas"), ("summary", "--suite", "nightly"), ("keys", "list"),
    ("gate", "--run", "run-1"), ("profiles", "list"),
)  # fmt: skip


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A per-user registry of this test's own: the servers it starts record themselves there."""
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    return config / "repute" / "servers"


def _cli(cwd: Path, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    """`repute ARGS` run from `cwd`, configured by nothing but `settings` (REPUTE_* names)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("REPUTE_")}
    env |= {f"REPUTE_{name.upper()}": value for name, value in settings.items()}
    command = [sys.executable, "-m", "service", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _elsewhere(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def test_a_read_where_there_is_no_store_says_so_and_creates_none(tmp_path: Path, registry: Path) -> None:
    elsewhere = _elsewhere(tmp_path)
    for args in READS:
        done = _cli(elsewhere, *args)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        [line] = done.stderr.splitlines()
        assert line.startswith(f"error: no Repute store at {elsewhere / '.repute'} and no server running"), line
    status = _cli(elsewhere, "status")
    assert status.returncode == 1 and "not running" in status.stdout and "no Repute store" in status.stdout
    named = _cli(elsewhere, "runs", data_dir=str(tmp_path / "named"))
    assert named.returncode == 1 and f"no Repute store at {tmp_path / 'named'}" in named.stderr
    assert not (elsewhere / ".repute").exists() and not (tmp_path / "named").exists()


def _stop(server: subprocess.Popen) -> None:
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)


def test_a_running_server_is_found_from_any_directory(tmp_path: Path, registry: Path) -> None:
    elsewhere = _elsewhere(tmp_path)
    first_dir, second_dir = tmp_path / "clone" / ".repute", tmp_path / "other" / ".repute"
    first_port, second_port = free_port(), free_port()
    first = start_server_process(first_dir, first_port)
    first_url = f"http://127.0.0.1:{first_port}"
    second = None
    try:
        ingested = _cli(elsewhere, "ingest", str(FIXTURES / "session_multi.json"))
        assert ingested.returncode == 0 and "1 run stored" in ingested.stderr, ingested.stderr
        runs = orjson.loads(_cli(elsewhere, "runs", "--json").stdout)
        assert [run["run_id"] for run in runs] == ["run-multi-003"]
        assert orjson.loads(_cli(elsewhere, "alerts", "--json").stdout)["alerts"] == []
        status = orjson.loads(_cli(elsewhere, "status", "--json").stdout)
        assert status["server"] == {"running": True, "url": first_url} and status["runs"] == 1

        second = start_server_process(second_dir, second_port)
        several = _cli(elsewhere, "runs")
        assert several.returncode == 2 and "several servers run" in several.stderr, several.stderr
        assert f"{first_url} ({first_dir})" in several.stderr
        assert orjson.loads(_cli(elsewhere, "runs", "--json", data_dir=str(second_dir)).stdout) == []
        by_url = _cli(elsewhere, "--url", first_url, "runs", "--json")
        assert [run["run_id"] for run in orjson.loads(by_url.stdout)] == ["run-multi-003"], by_url.stderr
        by_setting = _cli(elsewhere, "runs", "--json", url=f"http://127.0.0.1:{second_port}/")
        assert orjson.loads(by_setting.stdout) == [], by_setting.stderr

        _stop(first)
        assert orjson.loads(_cli(elsewhere, "runs", "--json").stdout) == []  # the one left: the second
        _stop(second)
        gone = _cli(elsewhere, "runs")
        assert gone.returncode == 1 and "no Repute store" in gone.stderr
        assert list(registry.glob("*.json")) == []  # each server removed its record as it stopped
    finally:
        for server in (first, second):
            if server is not None and server.poll() is None:
                server.kill()
    assert not (elsewhere / ".repute").exists()


def test_a_server_named_that_does_not_answer_is_one_line(tmp_path: Path, registry: Path) -> None:
    elsewhere, url = _elsewhere(tmp_path), f"http://127.0.0.1:{free_port()}"  # nothing listens there
    for args, settings in ((("--url", url, "runs"), {"api_key": "x"}), (("alerts",), {"url": url, "api_key": "x"})):
        done = _cli(elsewhere, *args, **settings)
        assert done.returncode == 2, (args, done.stderr)
        [line] = done.stderr.splitlines()
        assert line.startswith(f"error: cannot reach the server at {url}"), line
    status = _cli(elsewhere, "status", "--json", url=url, api_key="x")
    assert status.returncode == 1 and "cannot reach the server" in orjson.loads(status.stdout)["store"]["error"]

"""`repute record -- CMD ...`: an agent's process run and recorded as a run (its JSON lines as its events,
any other line as process_output, process_start and process_end around them, a staged error_event when it
fails or times out), stored through the server or the local store, and judged like `repute gate`."""

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from service.cli import app as cli
from tests.conftest import FIXTURES

LOOP = orjson.loads((FIXTURES / "session_loop.json").read_bytes())["events"]
CLEAN = orjson.loads((FIXTURES / "session_clean.json").read_bytes())["events"]


def _agent(tmp_path: Path, events: list[dict], *, exit_code: int = 0, sleep: float = 0) -> Path:
    """A Python agent that prints `events` as JSON lines on stdout, a plain line on each stream, then
    sleeps and exits."""
    script = tmp_path / "travel_agent.py"
    lines = "\n".join(f"print({orjson.dumps(event).decode()!r}, flush=True)" for event in events)
    script.write_text(
        "import sys, time\n"
        "print('starting the travel agent', flush=True)\n"
        f"{lines}\n"
        "print('warning: rates are cached', file=sys.stderr, flush=True)\n"
        f"time.sleep({sleep})\n"
        f"sys.exit({exit_code})\n"
    )
    return script


def _record(*args: str):
    return CliRunner().invoke(cli, ["record", *args])


def _events(client, run_id: str) -> list[dict]:
    return [{**e["data"], "event": e["type"]} for e in client.get(f"/v1/runs/{run_id}/events").json()["events"]]


def _run_id(output: str) -> str:
    return output.split("recorded run ", 1)[1].split(":", 1)[0]


def test_a_clean_agent_passes_and_every_line_is_kept(cli_as, client, tenant: str, tmp_path: Path) -> None:
    cli_as(tenant)
    done = _record("--suite", "nightly", "--", sys.executable, str(_agent(tmp_path, CLEAN)))
    assert done.exit_code == 0, done.output
    assert "PASS" in done.stdout and "exit code 0" in done.stdout
    run = client.get(f"/v1/runs/{_run_id(done.stdout)}").json()
    assert run["identity"] == "travel_agent" and run["suite"] == "nightly"  # the script's name by default
    assert run["execution_status"] == "ok" and run["trust_score"] == 100
    events = _events(client, run["run_id"])
    kinds = [event["event"] for event in events]
    assert kinds[0] == "process_start" and kinds[-1] == "process_end"
    # Each stream's lines keep their order; between stdout and stderr (two pipes, each read as it comes)
    # no order is promised: the stderr line may be read before stdout's last lines.
    printed = [event for event in events[1:-1] if event.get("stream") != "stderr"]
    assert [event["event"] for event in printed[1:]] == [event["event"] for event in CLEAN]  # as they came
    assert printed[0] == {
        **printed[0],
        "event": "process_output",
        "stream": "stdout",
        "text": "starting the travel agent",
    }
    assert [event["text"] for event in events if event.get("stream") == "stderr"] == ["warning: rates are cached"]
    assert events[-1]["exit_code"] == 0 and events[-1]["timed_out"] is False
    assert events[0]["command"] == [sys.executable, str(tmp_path / "travel_agent.py")]


def test_an_unsafe_agent_fails_the_gate(cli_as, tenant: str, tmp_path: Path) -> None:
    cli_as(tenant)
    done = _record("--identity", "agent-looper", "--min-trust", "10", "--", sys.executable, str(_agent(tmp_path, LOOP)))
    assert done.exit_code == 1 and "unsafe_for_production" in done.stdout, done.output


@pytest.mark.parametrize(
    ("options", "agent", "where"),
    [([], {"exit_code": 3}, "agent/nonzero_exit"), (["--timeout", "1"], {"sleep": 60}, "agent/budget_exceeded")],
    ids=["exit code", "timeout"],
)
def test_a_failed_or_stopped_process_is_an_execution_error(
    cli_as, client, tenant: str, tmp_path: Path, options: list[str], agent: dict, where: str
) -> None:
    cli_as(tenant)
    done = _record(*options, "--", sys.executable, str(_agent(tmp_path, CLEAN, **agent)))
    assert done.exit_code == 1 and f"execution error ({where})" in done.stdout, done.output
    run = client.get(f"/v1/runs/{_run_id(done.stdout)}").json()
    assert run["execution_status"] == "execution_error" and run["failure_stage"] == "agent"
    *_, error, end = _events(client, run["run_id"])
    assert error["event"] == "error_event" and error["reason"] == where.split("/")[1]
    assert end["event"] == "process_end" and end["timed_out"] == ("--timeout" in options)


def test_a_command_that_cannot_start_stores_nothing(cli_as, client, tenant: str) -> None:
    cli_as(tenant)
    done = _record("--", "/no/such/agent")
    assert done.exit_code == 2 and done.stderr.startswith("error: cannot run /no/such/agent"), done.output
    assert client.get("/v1/runs").json()["runs"] == []


def test_without_a_server_the_run_goes_to_the_local_store(tmp_path: Path) -> None:
    env = {name: value for name, value in os.environ.items() if not name.startswith("REPUTE_")}
    env["REPUTE_DATA_DIR"] = str(tmp_path / "store")
    command = [sys.executable, "-m", "service", "record", "--", sys.executable, str(_agent(tmp_path, CLEAN))]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "PASS" in done.stdout, done.stderr
    listed = subprocess.run([*command[:3], "runs", "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert [run["identity"] for run in orjson.loads(listed.stdout)] == ["travel_agent"], listed.stderr


WAITING_AGENT = """
import select, sys
print("ready: waiting for go")  # no flush: a Python agent run unbuffered still shows it
print("a word on stderr", file=sys.stderr, flush=True)
answered, _, _ = select.select([sys.stdin], [], [], 120)
said = sys.stdin.readline().strip() if answered else ""
print("went on after " + (said or "nothing"))
sys.exit(0 if said == "go" else 3)
"""


def test_the_agents_output_is_passed_through_as_it_comes(cli_as, tenant: str, tmp_path: Path) -> None:
    """The agent prints a line, then waits for `go` on its stdin (the recorder's), which the test sends only
    once it has read that line from the recorder's stdout. Fails if the output is passed through when the
    agent ends, or not at all (the agent gives up after 120 s and exits 3), or if a Python agent's output
    is block-buffered (its first line is printed without flush: it would come out at its end)."""
    cli_as(tenant)
    agent = tmp_path / "waiting_agent.py"
    agent.write_text(WAITING_AGENT)
    command = [sys.executable, "-m", "service", "record", "--", sys.executable, str(agent)]
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}  # as a user's shell
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as recorder:
        assert recorder.stdin is not None and recorder.stdout is not None and recorder.stderr is not None
        first = recorder.stdout.readline()
        recorder.stdin.write("go\n")
        recorder.stdin.close()
        rest, errors = recorder.stdout.read(), recorder.stderr.read()
    assert first == "ready: waiting for go\n"
    assert rest.startswith("went on after go\nrecorded run "), rest
    assert recorder.returncode == 0 and errors == "a word on stderr\n", errors


def test_quiet_records_the_output_without_passing_it_through(cli_as, client, tenant: str, tmp_path: Path) -> None:
    cli_as(tenant)
    done = _record("--quiet", "--", sys.executable, str(_agent(tmp_path, CLEAN)))
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("recorded run ") and done.stderr == ""
    texts = [event.get("text") for event in _events(client, _run_id(done.stdout))]
    assert "starting the travel agent" in texts and "warning: rates are cached" in texts

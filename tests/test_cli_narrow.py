"""Tables on an 80-column terminal keep every id whole: the other columns wrap between words, and where
that is not enough they are left out by priority (a line on stderr says which; --wide shows them). Run
through a real pseudo-terminal, as a user's shell runs `repute`."""

import io
import os
import pty
import re
import subprocess
import sys
import uuid
from pathlib import Path

import orjson
from rich.console import Console

from service.terminal import print_table
from tests.conftest import FIXTURES

STYLE = re.compile(r"\x1b\[[0-9;]*m")  # a terminal's colours and bold, which take no column


def _on_a_terminal(*args: str, columns: int = 80) -> tuple[list[str], str]:
    """`repute ARGS` with its stdout on a pseudo-terminal of `columns` columns: its lines and its stderr."""
    screen, terminal = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm"}  # a dumb terminal is 80 columns whatever
    with subprocess.Popen(
        [sys.executable, "-m", "service", *args], stdout=terminal, stderr=subprocess.PIPE, env=env, text=True
    ) as process:
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(screen, 65536)
            except OSError:  # the terminal closed: the process has ended
                break
            if not chunk:
                break
            shown += chunk
        errors = process.stderr.read() if process.stderr else ""
    os.close(screen)
    assert process.returncode == 0, errors
    return STYLE.sub("", shown.decode()).replace("\r\n", "\n").splitlines(), errors


def _stored(client, tmp_path: Path) -> list[tuple[str, str]]:
    """The quick tour's mix: short ids, a recorded run's long one, an execution error's long outcome."""
    files = tmp_path / "runs"
    files.mkdir()
    for name in ("session_loop.json", "session_infra_error.json", "session_multi.json"):
        (files / name).write_bytes((FIXTURES / name).read_bytes())
    long_one = {**orjson.loads((FIXTURES / "session_clean.json").read_bytes())}
    long_one |= {"run_id": f"run_{uuid.uuid4().hex}", "identity": "travel_agent"}
    (files / "recorded.json").write_bytes(orjson.dumps(long_one))
    return [(str(files), long_one["run_id"])]


def test_runs_and_ingest_keep_every_id_whole_at_80_columns(cli_as, client, tenant: str, tmp_path: Path) -> None:
    """Fails with the table of before (ids folded first when the other columns' words did not fit:
    `run-i / nfra- / 004`), or if a line is wider than the terminal."""
    cli_as(tenant)
    [(files, long_id)] = _stored(client, tmp_path)
    for command in (("ingest", files), ("runs",)):
        lines, errors = _on_a_terminal(*command)
        assert max(len(line) for line in lines) <= 80, "\n".join(lines)
        for run in client.get("/v1/runs").json()["runs"]:
            assert any(run["run_id"] in line.split() for line in lines), (run["run_id"], "\n".join(lines))
            assert any(run["identity"] in line.split() for line in lines), (run["identity"], "\n".join(lines))
        assert long_id in "\n".join(lines)
        [note] = [line for line in errors.splitlines() if line.startswith("not shown at 80 columns: ")]
        assert "tool calls" in note and "trust" not in note and note.endswith("(--wide or a wider terminal shows them)")
    wide, errors = _on_a_terminal("runs", columns=200)
    assert "not shown" not in errors and "tool calls" in wide[0]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _table(width: int, columns: tuple[str, ...], rows: list[tuple], ids: tuple[str, ...], drop: tuple[str, ...] = ()):
    screen = _Terminal()
    print_table(Console(file=screen, width=width, color_system=None), columns, rows, ids=ids, drop=drop)
    return screen.getvalue().splitlines()


def test_columns_are_left_out_in_the_order_given_then_from_the_right(capsys) -> None:
    """Fails if an id column is left out, or the order given is not followed."""
    columns = ("name", "first", "id", "second", "third")
    row = ("n" * 10, "f" * 10, "i" * 30, "s" * 10, "t" * 10)
    lines = _table(60, columns, [row], ids=("id",), drop=("first",))
    assert lines[0].split() == ["name", "id", "second"] and "i" * 30 in lines[-1]
    assert capsys.readouterr().err == "not shown at 60 columns: first, third (--wide or a wider terminal shows them)\n"


def test_a_table_without_ids_or_with_ids_too_long_folds_its_words(capsys) -> None:
    """Nothing is left out where it would keep no id whole: a status line (no ids) wraps and folds."""
    lines = _table(30, ("check", "state"), [("store", "reachable at /" + "d" * 60)], ids=())
    assert lines[0].split() == ["check", "state"] and max(len(line) for line in lines) <= 30
    lines = _table(30, ("id", "note"), [("x" * 60, "a note")], ids=("id",))
    assert max(len(line) for line in lines) <= 30
    assert "note" in lines[0] and capsys.readouterr().err == ""

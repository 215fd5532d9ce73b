"""`python -m bench scale` (SPEC §14) at a small size: it fills a store, reads it through the service and
ends with SPEC §14's line in its exact format. Speed is measured by the benchmark, never asserted here."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMBER = r"\d+\.\d"
LAST_LINE = re.compile(
    rf"scale: events 20000, identities 200, runs 2000, read p99 {NUMBER} ms, explain p99 {NUMBER} ms, "
    rf"refresh {NUMBER} s, fleet {NUMBER} ms, runs {NUMBER} ms, history p99 {NUMBER} ms, rss \d+ MiB, "
    rf"bytes/event {NUMBER}, "
    rf"bytes/run {NUMBER}"
)


def _scale(store: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", "scale", "--events", "20000", "--identities", "200", "--runs", "2000",
         "--store", str(store), "--no-rest"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip


def test_bench_scale_runs_and_ends_with_the_summary_line(tmp_path: Path) -> None:
    result = _scale(tmp_path / "store")
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert LAST_LINE.fullmatch(lines[-1]), lines[-1]
    assert any(line.startswith("bytes on disk per reputation event") for line in lines)
    again = _scale(tmp_path / "store")  # the store is measured again, not filled again
    assert again.returncode == 0 and "events:" not in again.stderr, again.stderr[-2000:]
    assert LAST_LINE.fullmatch(again.stdout.strip().splitlines()[-1])


def test_bench_scale_refuses_a_store_it_did_not_fill_to_the_end(tmp_path: Path) -> None:
    """A fill that stopped half-way leaves rows and no record of the counts: filling again would add to
    them, so the bench refuses the directory and writes nothing there. Broken on purpose: the refusal
    removed → this test fails."""
    store = tmp_path / "store"
    store.mkdir()
    (store / "left-by-a-fill").write_text("")
    result = _scale(store)
    assert result.returncode != 0
    assert "holds a store not filled to these counts" in result.stderr
    assert [path.name for path in store.iterdir()] == ["left-by-a-fill"]

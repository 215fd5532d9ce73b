"""The README's Quick tour runs as written: its fenced block, from the clone, against a live server, with
only the server's address and the key put in place of the README's (`make run`'s defaults)."""

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_URL = "http://127.0.0.1:8000"
README_KEY = "$(cat .repute/admin.key)"
MOST_LINES = 350  # the README is for users: the benchmarks' narrative is in bench/README.md


def quick_tour() -> str:
    section = README.read_text().split("\n## Quick tour\n", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    return block


def test_the_readme_is_short_and_its_tour_uses_the_samples_in_the_clone() -> None:
    assert len(README.read_text().splitlines()) < MOST_LINES
    tour = quick_tour()
    assert README_URL in tour and README_KEY in tour and "../shared" not in tour
    for sample in re.findall(r"examples/[\w./-]+", tour):
        assert (ROOT / sample).exists(), sample


def test_the_quick_tour_runs_as_written(base_url: str, make_client, tenant: str) -> None:
    key = make_client(tenant).headers["Authorization"].removeprefix("Bearer ")
    script = quick_tour().replace(README_URL, base_url).replace(README_KEY, key)
    env = {name: value for name, value in os.environ.items() if not name.startswith("REPUTE_")}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert '"run_id":"run-multi-003"' in done.stdout  # the curl's diagnosis
    shown = (
        "runs stored",
        "run-loop-002",
        "runs 3, execution errors 1 (33%)",
        "PASS run-multi-003",
        "recorded run",
        "trust 90/100",
    )
    assert all(words in done.stdout for words in shown), done.stdout[-3000:]

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
    assert README_URL in tour and README_KEY in tour
    for sample in re.findall(r"examples/[\w./-]+", tour):
        assert (ROOT / sample).exists(), sample


OUTSIDE = "../" + "shared"  # the team's directory beside the checkout, which a user's clone has not
READ_BY_USERS_AND_TESTS = ("README.md", "CONTRIBUTING.md", "Makefile", "docs/*.md", "bench/README.md", "tests/**/*.py")


def test_no_doc_or_test_points_outside_the_repository() -> None:
    """A clone stands alone (issue #41). Fails if a test reads, or a doc sends its reader to, the
    directory beside the checkout."""
    texts = [path for pattern in READ_BY_USERS_AND_TESTS for path in ROOT.glob(pattern)]
    assert len(texts) > 100
    assert [str(path.relative_to(ROOT)) for path in texts if OUTSIDE in path.read_text()] == []


def test_every_test_data_file_says_where_it_came_from() -> None:
    """Fails if a file is added to tests/data/ without its line in tests/data/README.md."""
    data = ROOT / "tests" / "data"
    provenance = (data / "README.md").read_text()
    files = [path.name for path in data.iterdir() if path.is_file() and path.name != "README.md"]
    assert len(files) == 8
    assert [name for name in files if f"`{name}`" not in provenance and ".expected.yaml" not in name] == []
    assert "`otlp_claude_code.<session>.expected.yaml`" in provenance


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

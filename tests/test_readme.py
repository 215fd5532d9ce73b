"""The README's Quick tour runs as written: its fenced block, from the clone, against a live server, with
only the server's address and the key put in place of the README's (`make run`'s defaults)."""

import os
import re
import subprocess
from pathlib import Path

from service.gate import gate_run

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


REPUTATION_DOC = ROOT / "docs" / "reputation.md"
EXAMPLE_DAY = "2026-11-20"


def test_the_reputation_docs_worked_example_is_what_the_service_says(make_client, tenant: str) -> None:
    """docs/reputation.md works an example from examples/ by hand; the service must give its figures.
    Broken on purpose: run_trust of a review run at (trust - 80) / 20 (+0.45: agent-atlas 86.25) -> fails."""
    doc = " ".join(REPUTATION_DOC.read_text().split())  # its lines unwrapped
    assert "docs/reputation.md" in README.read_text()
    client = make_client(tenant)
    for sample in ("session_clean.json", "session_loop.json", "session_multi.json", "session_infra_error.json"):
        assert client.post("/v1/sessions", content=(ROOT / "examples" / sample).read_bytes()).status_code == 201
    atlas = client.get("/v1/identities/agent-atlas/reputation", params={"as_of": EXAMPLE_DAY}).json()
    assert (atlas["overall"], atlas["categories"]["task_quality"], atlas["confidence"]) == (75.0, 75.0, 0.02)
    assert (atlas["runs"], atlas["execution_errors"]) == (3, 1)
    assert "**75.0**" in doc and "**0.02**" in doc and "3 runs, 1 execution error" in doc
    assert sorted(atlas["failures"]) == ["context_pollution", "ignoring_tool_outputs", "memory_degradation",
                                         "skill_failure"]  # fmt: skip
    borealis = client.get("/v1/identities/agent-borealis/reputation", params={"as_of": EXAMPLE_DAY}).json()
    assert borealis["overall"] == 0.0 and "reputation of **0.0**" in doc
    loop = client.get("/v1/runs/run-loop-002").json()
    assert (loop["trust_score"], loop["readiness_level"]) == (90, "unsafe_for_production")
    why = "unsafe at trust 90 because infinite_tool_loop is critical"
    assert why in doc and why in gate_run(loop, 80, allow_review=False).message

"""The README's Quick tour runs as written: its fenced block, from the clone, against a live server, with
only the server's address and the key put in place of the README's (`make run`'s defaults)."""

import os
import re
import subprocess
from pathlib import Path

from service.gate import gate_run
from service.store import reputation as reputation_store
from service.store.client import Store

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


# The team's directory beside the checkout, which a user's clone has not: named, or reached from the root.
OUTSIDE = re.compile(r"\.\./shared|[\"']shared[\"']|parents\[2\]|\b(?:ROOT|REPO)\.parent\b")
READ_BY_USERS_AND_TESTS = ("README.md", "CONTRIBUTING.md", "Makefile", "docs/*.md", "bench/README.md", "tests/**/*.py")


def test_no_doc_or_test_points_outside_the_repository() -> None:
    """A clone stands alone (issue #41). Fails if a test reads, or a doc sends its reader to, the
    directory beside the checkout (`Path(__file__).parents[2] / "shared"` was how four tests did)."""
    texts = [path for pattern in READ_BY_USERS_AND_TESTS for path in ROOT.glob(pattern) if path != Path(__file__)]
    assert len(texts) > 100
    assert [str(path.relative_to(ROOT)) for path in texts if OUTSIDE.search(path.read_text())] == []


def test_every_test_data_file_says_where_it_came_from() -> None:
    """Fails if a file is added to tests/data/ without its line in tests/data/README.md."""
    data = ROOT / "tests" / "data"
    provenance = (data / "README.md").read_text()
    files = [path.name for path in data.iterdir() if path.is_file() and path.name != "README.md"]
    assert len(files) == 8
    assert [name for name in files if f"`{name}`" not in provenance and ".expected.yaml" not in name] == []
    assert "`otlp_claude_code.<session>.expected.yaml`" in provenance


SAMPLE_AGENTS = ("agent-atlas", "agent-borealis", "claude-code", "travel_agent")


def _run_tour(script: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("REPUTE_")}
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


def test_the_quick_tour_runs_as_written(base_url: str, make_client, tenant: str, embedded_store: Store) -> None:
    """Each command of the tour, as written, against a live server. The fleet's scores refresh every minute
    (as the tour says): the test refreshes them before `repute fleet` instead of waiting. Fails if a
    sample's agent is missing from the fleet: a sample dated outside the 90 days before today (the Claude
    Code one was, until it was dated 2026-11-20; after 2027-02-17 every sample is, and must be re-dated)."""
    key = make_client(tenant).headers["Authorization"].removeprefix("Bearer ")
    lines = quick_tour().replace(README_URL, base_url).replace(README_KEY, key).splitlines(keepends=True)
    fleet = next(i for i, line in enumerate(lines) if line.startswith(".venv/bin/repute fleet"))
    before = _run_tour("".join(lines[:fleet]))
    assert before.returncode == 0, f"{before.stdout[-3000:]}\n{before.stderr[-3000:]}"
    reputation_store.refresh_scores(embedded_store)
    after = _run_tour("".join([lines[0], *lines[fleet:]]))  # the first line sets the server and the key
    assert after.returncode == 0, f"{after.stdout[-3000:]}\n{after.stderr[-3000:]}"

    shown, told = before.stdout, before.stderr
    assert '"run_id":"run-multi-003"' in shown  # the curl's diagnosis
    ingested = [line.split("\t") for line in shown.splitlines() if line.endswith(("\tnew", "\talready present"))]
    assert {row[0]: row[1] for row in ingested} == {
        "run-clean-001": "agent-atlas", "run-multi-003": "agent-atlas", "run-infra-004": "agent-atlas",
        "run-loop-002": "agent-borealis", "sess-a1": "claude-code", "sess-b2": "claude-code",
    }  # fmt: skip
    assert told == "5 files: 5 runs stored, 1 already present, 0 files failed\n"
    assert "primary: infinite_tool_loop (critical, impact -30)" in shown  # repute runs show
    assert "runs 3, execution errors 1 (33%)" in shown and "PASS run-multi-003" in shown
    assert '"tool": "search_flights"' in shown  # the recorded agent's own output, passed through
    assert "recorded run" in shown
    fleet_rows = {line.split("\t")[0] for line in after.stdout.splitlines()}
    assert set(SAMPLE_AGENTS) <= fleet_rows, after.stdout
    assert "trust 90/100" in after.stdout  # the offline diagnosis


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

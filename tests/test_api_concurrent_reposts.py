"""The same run posted by two clients at the same moment (a harness retrying on a timeout while the first
request is still being served; two workers handed the same job). The contract: a repost of the same run
answers the stored result, so both answers are success (201 for the one that stored it, 200 or a
`created: false` verdict for the other) with the same diagnosis, and the run is stored once; a 409 is
only for a run_id sent with other content."""

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import orjson
import pytest

from tests.write_bodies import session

AS_OF = "2026-11-01"
PAIRS = 12


def _single(client: httpx.Client, run: dict) -> tuple[int, bool, str]:
    response = client.post("/v1/sessions", content=orjson.dumps(run))
    assert response.status_code in (200, 201), response.text
    answer = response.json()
    assert answer["created"] is (response.status_code == 201)
    return response.status_code, answer["created"], answer["diagnosis_hash"]


def _in_batch(client: httpx.Client, run: dict) -> tuple[int, bool, str]:
    response = client.post("/v1/sessions/batch", content=orjson.dumps([run]))
    assert response.status_code == 201, response.text
    verdict = response.json()["results"][0]
    return response.status_code, verdict["created"], verdict["diagnosis_hash"]


Send = Callable[[httpx.Client, dict], tuple[int, bool, str]]
WAYS = {"both one-shot": (_single, _single), "both batched": (_in_batch, _in_batch), "mixed": (_single, _in_batch)}


@pytest.mark.parametrize("way", list(WAYS))
def test_the_same_run_from_two_clients_at_once_is_stored_once_and_both_succeed(make_client, tenant, way) -> None:
    """Broken on purpose: `_difference` (service/services/receivers/whole.py) refusing every repost (`if not
    differ:` made `if False:`) → the second answer is an error; `ingest_sessions` without its run lock (`holding`)
    → both batched posts store the run (two 201 `created`); this test fails either way."""
    first, second = make_client(tenant), make_client(tenant)
    sends = WAYS[way]
    runs = [session(f"{way.replace(' ', '-')}-{i}", f"agent-{i % 3}", seed=i) for i in range(PAIRS)]
    answers: list[list[tuple[int, bool, str]]] = []
    with ThreadPoolExecutor(2) as pool:
        for run in runs:
            together = threading.Barrier(2)

            def send(client: httpx.Client, way: Send, run: dict = run, together: threading.Barrier = together):
                together.wait()
                return way(client, run)

            answers.append(
                [job.result() for job in [pool.submit(send, c, w) for c, w in zip((first, second), sends, strict=True)]]
            )
    for run, pair in zip(runs, answers, strict=True):
        assert sorted(created for _, created, _ in pair) == [False, True], (run["run_id"], pair)
        assert len({diagnosis_hash for _, _, diagnosis_hash in pair}) == 1, (run["run_id"], pair)
        stored = first.get(f"/v1/runs/{run['run_id']}").json()
        assert stored["diagnosis"]["diagnosis_hash"] == pair[0][2]
    for identity in {run["identity"] for run in runs}:
        reputation = first.get(f"/v1/identities/{identity}/reputation", params={"as_of": AS_OF}).json()
        assert reputation["events"] == sum(run["identity"] == identity for run in runs)  # one run_trust per run


def test_a_run_in_two_batches_at_once_is_stored_once(make_client, tenant: str) -> None:
    """Batches [a, b] and [b, c] at the same moment: all three stored once, b's two verdicts alike."""
    first, second = make_client(tenant), make_client(tenant)
    a, b, c = (session(f"overlap-{name}", "agent-overlap", seed=n) for n, name in enumerate("abc"))
    together = threading.Barrier(2)

    def post(client: httpx.Client, runs: list[dict]) -> dict:
        together.wait()
        response = client.post("/v1/sessions/batch", content=orjson.dumps(runs))
        assert response.status_code == 201, response.text
        return {verdict["run_id"]: verdict for verdict in response.json()["results"]}

    with ThreadPoolExecutor(2) as pool:
        left, right = pool.submit(post, first, [a, b]), pool.submit(post, second, [b, c])
        left_verdicts, right_verdicts = left.result(), right.result()
    assert left_verdicts["overlap-a"]["created"] and right_verdicts["overlap-c"]["created"]
    assert [left_verdicts["overlap-b"]["created"], right_verdicts["overlap-b"]["created"]].count(True) == 1
    assert left_verdicts["overlap-b"]["diagnosis_hash"] == right_verdicts["overlap-b"]["diagnosis_hash"]
    reputation = first.get("/v1/identities/agent-overlap/reputation", params={"as_of": AS_OF}).json()
    assert reputation["events"] == 3

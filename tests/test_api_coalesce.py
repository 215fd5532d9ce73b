"""Group commit of single-run writes: requests arriving while a write is in progress are written together,
each answered with its own result or its own error, and only once its group is written."""

import asyncio
import random
import threading
from collections.abc import Sequence

import httpx
import orjson
import pytest
from anyio import CapacityLimiter

from service.api.coalesce import Coalescer
from service.testing.factory import make_session


def test_requests_queued_during_a_write_go_together_and_errors_stay_their_own() -> None:
    groups: list[list[int]] = []
    first_started, release = threading.Event(), threading.Event()

    def work(items: Sequence[int]) -> list[int | Exception]:
        groups.append(list(items))
        first_started.set()
        release.wait(5)
        return [ValueError(f"odd {n}") if n % 2 else n * 10 for n in items]

    async def scenario() -> list[int | BaseException]:
        coalescer: Coalescer[int, int] = Coalescer(work, CapacityLimiter(1), max_group=3)
        first = asyncio.create_task(coalescer.submit(0))
        await asyncio.to_thread(first_started.wait, 5)
        later = [asyncio.create_task(coalescer.submit(n)) for n in range(1, 6)]
        await asyncio.sleep(0.05)
        release.set()
        return await asyncio.gather(first, *later, return_exceptions=True)

    answers = asyncio.run(scenario())
    assert groups == [[0], [1, 2, 3], [4, 5]]
    assert answers[0] == 0 and answers[2] == 20 and answers[4] == 40
    assert [str(a) for a in answers if isinstance(a, ValueError)] == ["odd 1", "odd 3", "odd 5"]


def test_a_failed_write_fails_only_its_group() -> None:
    def work(items: Sequence[int]) -> list[int | Exception]:
        raise ConnectionError("store down")

    async def scenario() -> None:
        coalescer: Coalescer[int, int] = Coalescer(work, CapacityLimiter(1), max_group=10)
        with pytest.raises(ConnectionError):
            await coalescer.submit(1)

    asyncio.run(scenario())


def test_concurrent_single_runs_each_get_their_own_answer(make_client, tenant: str) -> None:
    rng = random.Random(3)
    sessions = [make_session(rng, f"co-{i}", f"agent-{i % 3}", 20) for i in range(12)]
    bodies = [orjson.dumps(s) for s in sessions] + [orjson.dumps(sessions[0]), b'{"identity": "x", "events": [1]}']
    client = make_client(tenant)
    answers: list[httpx.Response | None] = [None] * len(bodies)

    def send(index: int) -> None:
        answers[index] = client.post("/v1/sessions", content=bodies[index])

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(bodies))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = [answer.status_code if answer else 0 for answer in answers]
    assert statuses[-1] == 422  # the bad body alone
    assert sorted([statuses[0], statuses[-2]]) == [200, 201]  # the same run twice: stored once
    assert statuses[1:-2] == [201] * 11
    runs = client.get("/v1/runs", params={"limit": 100}).json()["runs"]
    assert sorted(run["run_id"] for run in runs) == sorted(s["run_id"] for s in sessions)

"""Two tenants on one server (SPEC §13 fairness; issues #29 and #37): tenant B's single runs, run lists and
reputation reads, alone, then while tenant A floods, then after the flood. Three floods, each on a server
of its own:

- `mixed` (issue #29): 12 clients posting conflicting single runs, batches of 100 runs and bodies of 1 MiB;
- `otlp`: 40 clients posting OTLP/JSON bodies of about 1.4 MB, traces (about 2,000 spans, each trace
  settling into a finalize of its own) and log records (about 3,000) in turn;
- `sessions`: 40 clients posting large whole runs (10,000 events, or 1 MiB of metadata) in turn.

Targets (SPEC §13): B's writes within 3x their p50 and p99 alone, its reads within 2x, and both back to
normal within 5 s of the flood's end. The flooding clients wait `Retry-After` when refused (429, 503), as
OTLP exporters do, and run in a process of their own, so their work (encoding and sending 56 MB at a time)
does not sit in B's measuring loop; B's client sends one request at a time, and its first WARM_SECONDS of
requests on a new server are not counted. "Back to normal": from the flood's end (A stops sending; what it
sent is still answered), the seconds until every later one-second window of B's requests has its p50
within 1.5x of alone. Alone twice: before the flood, on a store holding little, and again once the server is
idle after it (A's work done), on the store the flood left, which holds A's data: B's reads and writes there
are slower than before for good (more rows and parts beside B's), so "back to normal" is told against both.

`REPUTE_BENCH_FAIRNESS_SECONDS` (30) is each flood's length; `python -m bench fairness` runs the three,
`REPUTE_BENCH_FAIRNESS_FLOODS=otlp` one of them."""

import asyncio
import contextlib
import multiprocessing
import os
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import partial
from multiprocessing.queues import SimpleQueue
from multiprocessing.synchronize import Event
from typing import Any

import httpx
import orjson

from bench._server import Served, cpu_seconds, load_average, percentile, served
from service.testing.factory import make_session

SECONDS = float(os.environ.get("REPUTE_BENCH_FAIRNESS_SECONDS", 30))
FLOODS = os.environ.get("REPUTE_BENCH_FAIRNESS_FLOODS", "mixed,otlp,sessions").split(",")
AFTER_SECONDS = 15.0
WARM_SECONDS = 3.0  # B's requests before it is measured alone
WINDOW_SECONDS = 1.0
NORMAL = 1.5  # a window is back to normal when its p50 is within this of alone
IDLE_SHARE = 0.05  # the server is idle when its threads used less than this share of a core over IDLE_PROBE_SECONDS
IDLE_PROBE_SECONDS = 2.0
IDLE_WAIT_SECONDS = 180.0  # the longest wait for it, after the flood's measured end
SLOT = b"@slot@"  # where each request's own run, trace or session id goes in a body made before the clock
T0 = 1_763_629_225_000_000_000


# --- tenant A's bodies, made before the clock ---------------------------------------------------------------


def _mixed_bodies(rng: random.Random) -> tuple[int, list[tuple[str, bytes]]]:
    large = []
    for number in range(40):
        run = make_session(rng, f"large-{number}-@slot@", "agent-a", 50)
        run["metadata"] = {"padding": "x" * 1_000_000}
        large.append(("/v1/sessions", orjson.dumps(run)))
    batches = [
        (
            "/v1/sessions/batch",
            orjson.dumps([make_session(rng, f"batch-{i}-@slot@", "agent-a", 50) for i in range(100)]),
        )
        for _ in range(8)
    ]
    conflicting = [("/v1/sessions", orjson.dumps(make_session(rng, "conflicting", "agent-a", 5 + n))) for n in range(8)]
    return 12, large + batches + conflicting


def _value(value: object) -> dict[str, object]:
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value}


def _attributes(values: dict[str, object]) -> list[dict[str, object]]:
    return [{"key": key, "value": _value(value)} for key, value in values.items()]


def _model_call(rng: random.Random, number: int) -> dict[str, object]:
    start = T0 + number * 10**9
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "model-a",
        "gen_ai.usage.input_tokens": rng.randrange(100, 5000),
        "gen_ai.usage.output_tokens": rng.randrange(10, 500),
        "gen_ai.prompt": "".join(rng.choices("abcdefghij ", k=220)),
    }
    return {
        "traceId": "@slot@", "spanId": f"{number + 2:016x}", "parentSpanId": f"{1:016x}", "name": "chat",
        "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 5 * 10**8),
        "attributes": _attributes(attributes),
    }  # fmt: skip


def _trace_body(rng: random.Random, spans: int) -> bytes:
    """One trace: an agent's root span and `spans` model calls under it, each with its prompt's text."""
    root = {
        "traceId": "@slot@", "spanId": f"{1:016x}", "name": "invoke_agent agent-a",
        "startTimeUnixNano": str(T0), "endTimeUnixNano": str(T0 + spans * 10**9),
        "attributes": _attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "agent-a"}),
    }  # fmt: skip
    calls = [_model_call(rng, number) for number in range(spans)]
    resource = {"attributes": _attributes({"service.name": "agent-a"})}
    scope = {"scope": {"name": "a"}, "spans": [root, *calls]}
    return orjson.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]})


def _logs_body(rng: random.Random, records: int) -> bytes:
    """One Claude Code session's log records: tool results and API requests."""
    made = []
    for number in range(records):
        common = {"session.id": "@slot@", "duration_ms": rng.randrange(10, 5000)}
        if number % 4:
            own: dict[str, object] = {"tool_name": rng.choice(("Read", "Grep", "Bash")), "success": "true"}
            name = "claude_code.tool_result"
        else:
            own = {"model": "claude-sonnet", "input_tokens": rng.randrange(100, 9000), "output_tokens": 200}
            name = "claude_code.api_request"
        made.append(
            {"timeUnixNano": str(T0 + number * 10**9), "body": {"stringValue": name},
             "attributes": _attributes({**common, **own, "prompt": "".join(rng.choices("abcdef ", k=120))})}
        )  # fmt: skip
    resource = {"attributes": _attributes({"service.name": "claude-code"})}
    scope = {"scope": {"name": "com.anthropic.claude_code.events"}, "logRecords": made}
    return orjson.dumps({"resourceLogs": [{"resource": resource, "scopeLogs": [scope]}]})


def _otlp_bodies(rng: random.Random) -> tuple[int, list[tuple[str, bytes]]]:
    return 40, [("/v1/traces", _trace_body(rng, 1_950)), ("/v1/logs", _logs_body(rng, 2_900))]


def _session_bodies(rng: random.Random) -> tuple[int, list[tuple[str, bytes]]]:
    many = make_session(rng, "many-@slot@", "agent-a", 10_000)
    padded = make_session(rng, "padded-@slot@", "agent-a", 50)
    padded["metadata"] = {"padding": "x" * 1_000_000}
    return 40, [("/v1/sessions", orjson.dumps(many)), ("/v1/sessions", orjson.dumps(padded))]


BODIES: dict[str, Callable[[random.Random], tuple[int, list[tuple[str, bytes]]]]] = {
    "mixed": _mixed_bodies,
    "otlp": _otlp_bodies,
    "sessions": _session_bodies,
}


# --- tenant A: the flood, in a process of its own ---------------------------------------------------------


@dataclass
class FloodAnswers:
    """What tenant A's flood got: requests stored (2xx), refused to wait (429, 503), and the seconds from the
    flood's end to its last answer (its backlog, sent before the end)."""

    stored: int = 0
    refused: int = 0
    last_after_end: float = 0.0


def _flood_process(
    base_url: str, key: str, flood: str, ready: Event, go: Event, seconds: float, answers: "SimpleQueue[Any]"
) -> None:
    clients, bodies = BODIES[flood](random.Random(3))
    ready.set()
    go.wait()
    answers.put(asyncio.run(_flood(base_url, key, clients, bodies, time.perf_counter() + seconds)))


async def _flood(
    base_url: str, key: str, clients: int, bodies: list[tuple[str, bytes]], deadline: float
) -> FloodAnswers:
    headers = {"Authorization": f"Bearer {key}", "content-type": "application/json"}
    limits = httpx.Limits(max_connections=clients)
    got = FloodAnswers()
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=600, limits=limits) as http:

        async def client(number: int) -> None:
            sent = 0
            while time.perf_counter() < deadline:
                path, body = bodies[(number + sent) % len(bodies)]
                sent += 1
                slot = f"{number:04x}{sent:06x}{time.time_ns() % 10**12:022x}".encode()
                with contextlib.suppress(httpx.HTTPError):  # a refusal or a timeout is the flood's own business
                    answer = await http.post(path, content=body.replace(SLOT, slot))
                    got.last_after_end = max(got.last_after_end, time.perf_counter() - deadline)
                    got.stored += answer.is_success
                    if answer.status_code in (429, 503):  # as OTLP exporters and HTTP clients do
                        got.refused += 1
                        await asyncio.sleep(float(answer.headers.get("retry-after", 1)))

        await asyncio.gather(*(client(number) for number in range(clients)))
    return got


# --- tenant B: what it measures ------------------------------------------------------------------------------

WRITE, RUN_LIST, REPUTATION = "single run", "run list", "reputation"
KINDS = (WRITE, RUN_LIST, REPUTATION)
TARGET = {WRITE: 3.0, RUN_LIST: 2.0, REPUTATION: 2.0}


@dataclass
class Samples:
    """B's requests: (when it ended, seconds from the start; how long it took, ms) by kind."""

    by_kind: dict[str, list[tuple[float, float]]] = field(default_factory=lambda: {kind: [] for kind in KINDS})

    def latencies(self, kind: str, since: float = 0, until: float = float("inf")) -> list[float]:
        return [took for ended, took in self.by_kind[kind] if since <= ended < until]


async def _measure(
    http: httpx.AsyncClient, samples: Samples, began: float, deadline: float, rng: random.Random
) -> None:
    """One run posted, then its identity's run list and reputation, one request at a time, until the deadline."""
    requests: tuple[tuple[str, Callable[[], Awaitable[httpx.Response]]], ...] = (
        (RUN_LIST, partial(http.get, "/v1/runs", params={"limit": 50, "identity": "agent-b"})),
        (REPUTATION, partial(http.get, "/v1/identities/agent-b/reputation")),
    )
    while time.perf_counter() < deadline:
        body = orjson.dumps(make_session(rng, f"b-{time.perf_counter_ns()}", "agent-b", 50))
        write: Callable[[], Awaitable[httpx.Response]] = partial(http.post, "/v1/sessions", content=body)
        for kind, call in ((WRITE, write), *requests):
            started = time.perf_counter()
            (await call()).raise_for_status()
            ended = time.perf_counter()
            samples.by_kind[kind].append((ended - began, (ended - started) * 1000))


@dataclass(frozen=True)
class Measured:
    alone: Samples
    flood: Samples
    flood_seconds: tuple[float, float]  # from, until (seconds from the start of the flood's samples)
    idle_after: float | None  # seconds from the end of `flood`'s samples until the server was idle (None: never)
    alone_after: Samples  # B alone again once the server was idle: the store as the flood left it
    flood_answers: FloodAnswers = field(default_factory=FloodAnswers)


async def _keys(server: Served) -> dict[str, str]:
    async with httpx.AsyncClient(base_url=server.base_url, headers=server.headers, timeout=60) as admin:
        keys = {}
        for tenant in ("bench-a", "bench-b"):
            created = await admin.post("/v1/keys", json={"tenant": tenant, "scopes": ["ingest", "read"]})
            keys[tenant] = created.json()["key"]
        return keys


def _run(server: Served, flood: str) -> Measured:
    keys = asyncio.run(_keys(server))
    context = multiprocessing.get_context("spawn")
    ready, go, answers = context.Event(), context.Event(), context.SimpleQueue()
    flooder = context.Process(
        target=_flood_process, args=(server.base_url, keys["bench-a"], flood, ready, go, SECONDS, answers),
        daemon=True,
    )  # fmt: skip
    flooder.start()
    ready.wait()
    measured = asyncio.run(_phases(server, keys["bench-b"], go))
    flooder.join()
    return replace(measured, flood_answers=answers.get())


async def _phases(server: Served, key: str, go: Event) -> Measured:
    rng = random.Random(5)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=server.base_url, headers=headers, timeout=600) as http:
        # A new server's first requests (its first statements, cold caches) are not B alone: not counted.
        began = time.perf_counter()
        await _measure(http, Samples(), began, began + WARM_SECONDS, rng)
        alone = Samples()
        began = time.perf_counter()
        await _measure(http, alone, began, began + SECONDS / 2, rng)
        flood = Samples()
        began = time.perf_counter()
        go.set()
        await _measure(http, flood, began, began + SECONDS + AFTER_SECONDS, rng)
        idle_after = await _idle(server.pid)
        alone_after = Samples()
        began = time.perf_counter()
        await _measure(http, alone_after, began, began + SECONDS / 2, rng)
    # The flood's first second: its first requests coming in.
    return Measured(alone, flood, (1.0, SECONDS), idle_after, alone_after)


async def _idle(pid: int) -> float | None:
    """Seconds until the server's threads use less than IDLE_SHARE of a core (A's requests answered, its traces
    settled and finalized, the engine's merges of them done), at most IDLE_WAIT_SECONDS (then None)."""
    began = time.perf_counter()
    while time.perf_counter() - began < IDLE_WAIT_SECONDS:
        before = cpu_seconds(pid)
        await asyncio.sleep(IDLE_PROBE_SECONDS)
        if cpu_seconds(pid) - before < IDLE_SHARE * IDLE_PROBE_SECONDS:
            return time.perf_counter() - began
    return None


def _medians(samples: Samples) -> dict[str, float]:
    """B's p50 of each kind of request in `samples`."""
    return {kind: statistics.median(samples.latencies(kind)) for kind in KINDS}


def _out_of_normal(baseline: Samples, samples: Samples, since: float, windows: int) -> list[bool]:
    """For each of `windows` windows of `samples` from `since`: whether B's p50 of some kind in it is above
    NORMAL times its p50 in `baseline` (B alone)."""
    alone = _medians(baseline)

    def late(start: float) -> bool:
        windows_by_kind = {kind: samples.latencies(kind, start, start + WINDOW_SECONDS) for kind in KINDS}
        return any(
            window and statistics.median(window) > NORMAL * alone[kind] for kind, window in windows_by_kind.items()
        )

    return [late(since + number * WINDOW_SECONDS) for number in range(windows)]


def recovery_seconds(measured: Measured, baseline: Samples) -> float | None:
    """Seconds from the flood's end until every later window of B's requests of each kind has its p50
    within NORMAL of `baseline` (B alone before the flood, or after it); None when the last window is not back."""
    windows = int(AFTER_SECONDS / WINDOW_SECONDS)
    out = _out_of_normal(baseline, measured.flood, measured.flood_seconds[1], windows)
    back_from = max((number + 1 for number, late in enumerate(out) if late), default=0)
    return None if back_from == windows else back_from * WINDOW_SECONDS


def alone_out_of_normal(measured: Measured) -> tuple[int, int]:
    """The same windows over B alone (no flood): how many are out of normal, of how many. The criterion's
    own noise: a window holds a few requests of each kind, and one slow request in two moves its p50."""
    out = _out_of_normal(measured.alone, measured.alone, 0.0, int(SECONDS / 2 / WINDOW_SECONDS))
    return sum(out), len(out)


def _rows(flood: str, measured: Measured) -> list[tuple[str, str, str]]:
    rows = []
    for kind in KINDS:
        alone = measured.alone.latencies(kind)
        under = measured.flood.latencies(kind, *measured.flood_seconds)
        figures = []
        for share in (50, 99):
            before, during = percentile(alone, share / 100), percentile(under, share / 100)
            figures.append(f"p{share} {before:.0f} / {during:.0f} ms ({during / before:.1f}x)")
        rows.append(
            (f"{flood}: tenant B's {kind}, alone / while A floods ({len(under)})", ", ".join(figures),
             f"<= {TARGET[kind]:.0f}x")
        )  # fmt: skip
    end = measured.flood_seconds[1]
    after = [
        measured.flood.latencies(WRITE, end + second, end + second + WINDOW_SECONDS)
        for second in range(int(AFTER_SECONDS))
    ]
    medians = " ".join(f"{statistics.median(window):.0f}" if window else "-" for window in after)
    rows.append((f"{flood}: tenant B's single run p50 each second after the flood's end (ms)", medians, "-"))
    got = measured.flood_answers
    rows.append(
        (f"{flood}: A's requests stored / refused to wait, its last answer after the flood's end",
         f"{got.stored} / {got.refused}, {got.last_after_end:.1f} s", "-")
    )  # fmt: skip
    rows.extend(_recovery_rows(flood, measured))
    late, windows = alone_out_of_normal(measured)
    rows.append((f"{flood}: B alone, 1 s windows out of normal by the same test", f"{late} of {windows}", "-"))
    rows.append((load_average(), f"after the {flood} flood", "-"))
    return rows


def _recovery_rows(flood: str, measured: Measured) -> list[tuple[str, str, str]]:
    """B alone again on the store the flood left, and the return to normal against B alone before and after."""
    idle = "never" if measured.idle_after is None else f"{measured.idle_after:.0f} s after B's last window"
    before, again = _medians(measured.alone), _medians(measured.alone_after)
    figures = ", ".join(f"{kind} {again[kind]:.0f} ms ({again[kind] / before[kind]:.2f}x)" for kind in KINDS)
    rows = [(f"{flood}: B alone again once the server is idle ({idle}), p50 (x before)", figures, "-")]
    for baseline, name in ((measured.alone, "before the flood"), (measured.alone_after, "on the store the flood left")):
        recovered = recovery_seconds(measured, baseline)
        back = f"not within the {AFTER_SECONDS:.0f} s measured" if recovered is None else f"{recovered:.0f} s"
        rows.append((f"{flood}: back to normal after the flood's end, against B alone {name}", back, "<= 5 s"))
    return rows


def main() -> list[tuple[str, str, str]]:
    rows = []
    for flood in FLOODS:
        with served() as server:
            rows.extend(_rows(flood, _run(server, flood)))
    return rows


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))

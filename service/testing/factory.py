"""Deterministic random runs for tests (mixed event types, some failures of every kind)."""

import random
from datetime import UTC, datetime, timedelta
from typing import Any

TOOLS = ("search", "fetch", "run", "grep", "sql")


def make_events(rng: random.Random, count: int, start: datetime) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for i in range(count):
        at = (start + timedelta(seconds=i)).isoformat().replace("+00:00", "Z")
        roll = rng.random()
        if roll < 0.35:
            events.append({"event": "tool_call", "tool": rng.choice(TOOLS), "args": {"k": rng.randint(0, 6)}})
        elif roll < 0.6:
            events.append({"event": "tool_output", "tool": rng.choice(TOOLS), "used": rng.random() > 0.1})
        elif roll < 0.68:
            events.append({"event": "memory_event", "action": rng.choice(["stored", "hit", "miss", "recall_failed"])})
        elif roll < 0.75:
            events.append({"event": "context_event", "saturation": rng.randint(30, 99)})
        elif roll < 0.82:
            events.append({"event": "token_usage", "total_tokens": rng.randint(100, 4000)})
        elif roll < 0.88:
            events.append({"event": "skill_event", "skill": "pdf", "invoked": rng.random() > 0.2})
        elif roll < 0.93:
            events.append({"event": "retry_event", "reason": "timeout"})
        else:
            events.append({"event": "decision", "choice": rng.choice(["a", "b"])})
        events[-1]["timestamp"] = at
    return events


def make_session(rng: random.Random, run_id: str, identity: str, count: int, day_offset: int = 0) -> dict[str, Any]:
    start = datetime(2026, 11, 1, 9, tzinfo=UTC) - timedelta(days=day_offset)
    return {"run_id": run_id, "identity": identity, "events": make_events(rng, count, start)}

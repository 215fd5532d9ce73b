"""An event's payload (`model.material.serialized`, its canonical JSON) is kept for every event of a run
until the run is stored: a run of 100,000 events holds 100,000 of them at once. orjson from 3.12 on gives
every result a buffer of about 4 KiB whatever its length (orjson 3.11: about 1 KiB), and one 100,000-event
run posted whole then took about twice the memory (`python -m bench memory`, bench/README.md), so
pyproject.toml keeps orjson below 3.12. Broken on purpose: orjson 3.13 installed → this test fails."""

import random
import tracemalloc
from datetime import UTC, datetime

from service.diagnosis import normalize_events
from service.model.material import serialized
from service.testing.factory import make_events

EVENTS = 2_000
HELD_PER_PAYLOAD = 2 * 1024  # bytes: twice orjson 3.11's buffer, half of 3.12's


def test_an_events_payload_holds_about_its_own_size() -> None:
    events = normalize_events(make_events(random.Random(7), EVENTS, datetime(2026, 11, 1, tzinfo=UTC)))
    tracemalloc.start()
    try:
        payloads = [serialized(event) for event in events]
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    sent = sum(map(len, payloads)) / EVENTS
    assert held < HELD_PER_PAYLOAD * EVENTS, f"{held / EVENTS:.0f} bytes held per payload of {sent:.0f}"

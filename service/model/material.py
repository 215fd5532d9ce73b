"""What a finalize judges: a run's header and its events, normalized and serialized once."""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

from service.diagnosis import Event, normalize_events
from service.diagnosis.events import TOKEN_USAGE
from service.memo import memoized
from service.model.header import RunHeader

# A token_usage event's cost_usd larger than this is no model call's price: it is not counted.
MAX_EVENT_COST_USD = Decimal(10**6)


@dataclass(frozen=True)
class RunMaterial:
    header: RunHeader
    events: list[Event]  # normalized once, by the receiver or the assembly that made them
    execution: dict[str, Any] | None = None  # the caller's execution object (SPEC §6), or the spans'
    session_performance: dict[str, Any] | None = None  # an OTLP log session's score (SPEC §5)
    # When the evidence says when the run ran better than its events' times (a trace: its spans).
    started_at: datetime | None = None
    ended_at: datetime | None = None
    # Set when the payloads were read back from the store as they were written (a streamed run).
    stored_payloads: Sequence[bytes] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_events(
        cls,
        header: RunHeader,
        events: Sequence[Any],
        execution: dict[str, Any] | None = None,
        session_performance: dict[str, Any] | None = None,
    ) -> "RunMaterial":
        """A run's material from its events as sent, normalized here (InputError names a bad one)."""
        return cls(header, normalize_events(events), execution, session_performance)

    @property
    def raw_events(self) -> list[Any]:
        """The events as sent (the objects the diagnosis reads)."""
        return [event.data for event in self.events]

    @memoized
    def payloads(self) -> Sequence[bytes]:
        """Each event as canonical JSON (keys sorted): serialized once, for the store and the hash."""
        if self.stored_payloads is not None:
            return self.stored_payloads
        return [serialized(event) for event in self.events]

    @property
    def content_hash(self) -> str:
        return content_hash(self.payloads)

    @property
    def cost_usd(self) -> float | None:
        """What the run cost: its token_usage events' `cost_usd` summed exactly (a Claude Code session's
        requests, a trace's model calls whose attributes give it), None when no event names one."""
        return cost_usd(self.events)


def cost_usd(events: Sequence[Event]) -> float | None:
    """The token_usage events' `cost_usd` summed exactly; None when none names a readable amount."""
    amounts = [_amount(event.data.get("cost_usd")) for event in events if event.type == TOKEN_USAGE]
    known = [amount for amount in amounts if amount is not None]
    return float(sum(known, Decimal(0))) if known else None


def _amount(value: Any) -> Decimal | None:
    """A cost as sent: a number, or its decimal text ("0.031531", as Claude Code records it); None for
    anything else, and for a negative, non-finite or absurd amount."""
    if type(value) not in (int, float, str) or (type(value) is str and len(value) > 64):
        return None
    try:
        amount = Decimal(repr(value) if type(value) is float else value)
    except InvalidOperation:
        return None
    return amount if amount.is_finite() and 0 <= amount <= MAX_EVENT_COST_USD else None


def serialized(event: Event) -> bytes:
    """An event as canonical JSON (keys sorted): the one place an event is serialized (a pipeline serializes
    each event once: tests/test_pipeline_once.py counts the calls)."""
    return orjson.dumps(event.data, option=orjson.OPT_SORT_KEYS)


def content_hash(payloads: Sequence[bytes]) -> str:
    """What a run was finalized from (sha256 of its events as one canonical JSON array), for telling a
    repeated post from a different run. The same bytes as hashing `orjson.dumps(events, OPT_SORT_KEYS)`."""
    digest = hashlib.sha256(b"[")
    for index, payload in enumerate(payloads):
        if index:
            digest.update(b",")
        digest.update(payload)
    digest.update(b"]")
    return digest.hexdigest()

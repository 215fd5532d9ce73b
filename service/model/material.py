"""What a finalize judges: a run's header and its events, normalized and serialized once."""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

import orjson

from service.diagnosis import Event, normalize_events
from service.model.header import RunHeader


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

    @cached_property
    def payloads(self) -> Sequence[bytes]:
        """Each event as canonical JSON (keys sorted): serialized once, for the store and the hash."""
        if self.stored_payloads is not None:
            return self.stored_payloads
        return [serialized(event) for event in self.events]

    @property
    def content_hash(self) -> str:
        return content_hash(self.payloads)


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

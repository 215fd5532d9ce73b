"""Re-emitting a finalized run's reputation events under the current model (`repute reputation rebuild`).

Stored events are never rewritten: an event that the current model would not emit is undone by its
retraction (migrations/0010), a row with sign -1 and otherwise the event's exact fields, plus
attributes['retracts'] = the retracted id, so every sum and count nets it out. The run's current
events are its sign +1 events not retracted yet. `plan` compares them with what `events_for_run` emits
now, by content (every field but the id):

- a current event that the model emits as it is stays, and nothing is written for it;
- any other current event is retracted; the retraction's id is derived from the retracted id alone;
- an emitted event that is not current is written under the first id of its lineage that the run has
  never stored: its base id (UUIDv5 of tenant/run/event type, what a finalize writes), else the base id
  re-derived with a generation 1, 2, ... An id once stored is never reused, since the store skips known
  ids: a model that changes back to an old value (A, B, then A again) still gets a new row.

So a run that is up to date plans nothing, a rebuild run twice writes nothing the second time, and one
cut short half-way converges when run again (it recomputes the same ids, and the store skips those
already written). A finalize that runs again for a rebuilt run emits its base ids, which are stored
already (as the current event or as a retracted one): skipped. Pure: no store, no clock.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from uuid import UUID

from service.reputation.model import ReputationEvent, event_uuid

RETRACTS = "retracts"  # the attribute of a retraction naming the event it retracts
_NO_ID = UUID(int=0)


@dataclass(frozen=True)
class Plan:
    """The rows that bring one run's events up to date: retractions, then the newly emitted events."""

    retractions: tuple[ReputationEvent, ...] = ()
    emissions: tuple[ReputationEvent, ...] = ()

    @property
    def rows(self) -> tuple[ReputationEvent, ...]:
        return self.retractions + self.emissions


def retraction_id(event_id: UUID) -> UUID:
    return event_uuid("retraction", str(event_id))


def retraction(event: ReputationEvent) -> ReputationEvent:
    """The row that takes `event` out of every sum: the same fields with sign -1, linked to it."""
    return replace(
        event,
        event_id=retraction_id(event.event_id),
        attributes={**event.attributes, RETRACTS: str(event.event_id)},
        sign=-1,
    )


def current_events(stored: Iterable[ReputationEvent]) -> list[ReputationEvent]:
    """The stored events that count: sign +1 and not retracted."""
    stored = list(stored)
    retracted = {event.attributes[RETRACTS] for event in stored if event.sign < 0}
    return [event for event in stored if event.sign > 0 and str(event.event_id) not in retracted]


def _content(event: ReputationEvent) -> ReputationEvent:
    return replace(event, event_id=_NO_ID)


def _unused_id(base: UUID, used: set[UUID]) -> UUID:
    candidate, generation = base, 0
    while candidate in used:
        generation += 1
        candidate = event_uuid(str(base), "generation", str(generation))
    return candidate


def plan(stored: Sequence[ReputationEvent], emitted: Sequence[ReputationEvent]) -> Plan:
    """What to write so that the run's current events are `emitted` (what the model emits for it now),
    given every row stored for it (`stored`, retractions included)."""
    unmatched = current_events(stored)
    used = {event.event_id for event in stored}
    emissions = []
    for event in emitted:
        same = next((i for i, current in enumerate(unmatched) if _content(current) == _content(event)), None)
        if same is not None:
            del unmatched[same]
            continue
        fresh = replace(event, event_id=_unused_id(event.event_id, used))
        used.add(fresh.event_id)
        emissions.append(fresh)
    return Plan(tuple(retraction(event) for event in unmatched), tuple(emissions))

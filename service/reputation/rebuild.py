"""Re-emitting a finalized run's reputation events under the current model (`repute reputation rebuild`).

Stored events are never rewritten: an event that the current model would not emit is undone by its
retraction (migrations/0010), a row with sign -1 and otherwise the event's exact fields, plus
attributes['retracts'] = the retracted id, so every sum and count nets it out. The run's current
events are its sign +1 events not retracted yet. `plan` compares them with what `events_for_run` emits
now, by content (every field but the id):

- a current event that the model emits as it is stays, and nothing is written for it;
- any other current event is retracted;
- an emitted event that is not current is written under the first id of its lineage that is free: its
  base id (UUIDv5 of tenant/run/event type, what a finalize writes), else the base id re-derived with a
  generation 1, 2, ... A retraction's lineage starts at an id derived from the retracted id alone. An id
  once stored is never reused, since the store skips known ids: a model that changes back to an old
  value (A, B, then A again) still gets a new row.

Occupants (issue #28): before posted signals had an id space of their own, a client could post a signal
under an id the run would emit (or a retraction or generation id), and the store then skipped the run's
own row as a duplicate. The caller looks up the ids a plan would write and hands back the rows it finds
there that are not the run's own; `plan` never writes under their ids, and retracts each one that counts
(sign +1, not capped, not retracted yet), with its own source, so that the run's events alone count.

So a run that is up to date plans nothing, a rebuild run twice writes nothing the second time, and one
cut short half-way converges when run again (it recomputes the same ids, and the store skips those
already written). A finalize that runs again for a rebuilt run emits its base ids, which are stored
already (as the current event, as a retracted one, or as an occupant): skipped. Pure: no store, no clock.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from uuid import UUID

from service.reputation.model import ReputationEvent, event_uuid

RETRACTS = "retracts"  # the attribute of a retraction naming the event it retracts
_NO_ID = UUID(int=0)


@dataclass(frozen=True)
class Occupant:
    """A stored row under an id of a run's lineage that is not the run's own (a pre-claimed id), with the
    source and cap flag it was stored with: its retraction must carry the same to net it out."""

    event: ReputationEvent
    source: str
    capped: bool = False


@dataclass(frozen=True)
class Plan:
    """The rows that bring one run's events up to date: retractions and newly emitted events (the run's
    own, source `repute`), and the retractions of occupants, each with the occupant's source."""

    retractions: tuple[ReputationEvent, ...] = ()
    emissions: tuple[ReputationEvent, ...] = ()
    evictions: tuple[Occupant, ...] = ()

    @property
    def rows(self) -> tuple[ReputationEvent, ...]:
        return self.retractions + self.emissions

    @property
    def ids(self) -> set[UUID]:
        """Every id the plan writes under."""
        return {event.event_id for event in self.rows} | {occupant.event.event_id for occupant in self.evictions}


def retraction_id(event_id: UUID) -> UUID:
    return event_uuid("retraction", str(event_id))


def retraction(event: ReputationEvent, event_id: UUID | None = None) -> ReputationEvent:
    """The row that takes `event` out of every sum: the same fields with sign -1, linked to it; its id
    the first of its lineage (`retraction_id`) unless another is given."""
    return replace(
        event,
        event_id=retraction_id(event.event_id) if event_id is None else event_id,
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
    """The first id of `base`'s lineage not in `used`, which it joins."""
    candidate, generation = base, 0
    while candidate in used:
        generation += 1
        candidate = event_uuid(str(base), "generation", str(generation))
    used.add(candidate)
    return candidate


def _evicted(occupants: Sequence[Occupant]) -> list[Occupant]:
    """The occupants that still count: sign +1, not capped, and not retracted by another occupant (a
    retraction an earlier rebuild wrote, found under an id of its lineage)."""
    retracted = {o.event.attributes.get(RETRACTS) for o in occupants if o.event.sign < 0}
    return [o for o in occupants if o.event.sign > 0 and not o.capped and str(o.event.event_id) not in retracted]


def plan(
    stored: Sequence[ReputationEvent], emitted: Sequence[ReputationEvent], occupants: Sequence[Occupant] = ()
) -> Plan:
    """What to write so that the run's current events are `emitted` (what the model emits for it now),
    given every row stored for it (`stored`, retractions included) and the occupants found under ids
    that earlier plans for it would write under."""
    unmatched = current_events(stored)
    used = {event.event_id for event in stored} | {occupant.event.event_id for occupant in occupants}
    emissions = []
    for event in emitted:
        same = next((i for i, current in enumerate(unmatched) if _content(current) == _content(event)), None)
        if same is not None:
            del unmatched[same]
            continue
        emissions.append(replace(event, event_id=_unused_id(event.event_id, used)))
    retractions = [retraction(event, _unused_id(retraction_id(event.event_id), used)) for event in unmatched]
    evictions = [
        replace(occupant, event=retraction(occupant.event, _unused_id(retraction_id(occupant.event.event_id), used)))
        for occupant in _evicted(occupants)
    ]
    return Plan(tuple(retractions), tuple(emissions), tuple(evictions))

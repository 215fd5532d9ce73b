"""The reputation scoring model. The SQL view `reputation_at` (migrations/0002) implements the same
formulas over daily aggregates; tests check both against a recomputation from raw events."""

import uuid
from dataclasses import dataclass, field
from datetime import datetime

CATEGORY_WEIGHTS: dict[str, float] = {"task_quality": 0.40, "economic": 0.35, "identity_hygiene": 0.25}
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_WEIGHTS)
WINDOW_DAYS = 90
TREND_OFFSETS_DAYS = (7, 30)
FULL_CONFIDENCE_EVENTS = 100

# Namespace of the deterministic ids of emitted events (UUIDv5 of tenant/reference/event type).
EVENT_NAMESPACE = uuid.UUID("6f1c1d7e-2d4b-5c59-9a51-7b1f3e0c8a10")


def event_uuid(*parts: str) -> uuid.UUID:
    """A stable id: the same parts always give the same UUID, so re-emitting is a no-op."""
    return uuid.uuid5(EVENT_NAMESPACE, "/".join(parts))


@dataclass(frozen=True)
class ReputationEvent:
    event_id: uuid.UUID
    timestamp: datetime
    identity: str
    category: str
    event_type: str
    score_delta: float
    confidence: float = 1.0
    weight: float = 1.0
    reference_type: str = ""
    reference_id: str = ""
    attributes: dict[str, str] = field(default_factory=dict)

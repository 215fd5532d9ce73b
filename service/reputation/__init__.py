"""Reputation: the scoring model constants and the events a finalized run emits (SPEC §7)."""

from service.reputation.model import (
    CATEGORIES,
    CATEGORY_WEIGHTS,
    FULL_CONFIDENCE_EVENTS,
    TREND_OFFSETS_DAYS,
    WINDOW_DAYS,
    ReputationEvent,
    event_uuid,
)

__all__ = [
    "CATEGORIES",
    "CATEGORY_WEIGHTS",
    "FULL_CONFIDENCE_EVENTS",
    "TREND_OFFSETS_DAYS",
    "WINDOW_DAYS",
    "ReputationEvent",
    "event_uuid",
]

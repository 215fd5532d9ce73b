"""The reputation model (SPEC §7, §7.1): its constants and its formula, in this file only.

The formula runs in ClickHouse, in two templates whose model placeholders are rendered from `formula_sql`:
sql/definitions/reputation_at.sql computes every figure from the daily aggregates, as the view reputation_at
for every identity (the refreshable fleet table, the alerts, Grafana) and, rendered for one identity, as the
API's read; sql/identity_explain.sql explains one identity's figures from its raw events. So a change of the
model is an edit of this file: the migration runner re-creates the view whenever its rendered text changes
(service/store/definitions.py), and the reads render theirs when they run.

SPEC §7.1 at read time: each event's c·w is multiplied by its source's credibility (1 unless an admin set
one) and, with a half-life h, by 2^(-(window end - day) / h). Confidence's N is the sum of credibility x decay
over the events with weight > 0: a plain count without decay at credibility 1, and a source set to
credibility 0 stops counting everywhere, so its events also leave the counts (events, positive and negative
events, failures). Capped events (over the per-source daily cap) never count.
"""

import uuid
from dataclasses import dataclass, field
from datetime import datetime

import orjson

from service.vocab import REPORTED_DECIMALS

# Each category's weight in the overall score, in the order the overall score sums them (a fixed order, so
# that a read is reproducible to the bit).
CATEGORY_WEIGHTS: dict[str, float] = {"task_quality": 0.40, "economic": 0.35, "identity_hygiene": 0.25}
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_WEIGHTS)
WINDOW_DAYS = 90
# The windows the trends compare with end this many days before as_of (score_7d_ago, score_30d_ago).
TREND_OFFSETS_DAYS = (7, 30)
# Confidence is min(1, N / FULL_CONFIDENCE_EVENTS).
FULL_CONFIDENCE_EVENTS = 100
# A credibility an admin never set.
DEFAULT_CREDIBILITY = 1.0
# The decay factor of a row of `day` in the window ending at `window_end`, with `half_life` days in force
# (0: none): 2^(-(window_end - day) / half_life), whole days.
DECAY_SQL = "if(half_life = 0, 1., exp2(toInt32(day - window_end) / half_life))"
# A score S in [-1, 1] (a category's Σδ·c·w / Σc·w, or the weighted mean of those) as reported, on 0..100:
# in SQL for the formula's templates, and in Python for what an explanation computes from their figures
# (tests/test_reputation_formula.py holds the two equal).
REPORTED_SCORE_SQL = "score -> 50 * (1 + score)"


def reported_score(score: float) -> float:
    return 50 * (1 + score)


# The formula's version: a signed statement names it with its parameters (SPEC §15). A change of the formula
# above is a new version.
VERSION = 1


def parameters() -> dict[str, object]:
    """The formula's version and constants, as a statement records them."""
    return {
        "version": VERSION,
        "window_days": WINDOW_DAYS,
        "category_weights": CATEGORY_WEIGHTS,
        "trend_offsets_days": list(TREND_OFFSETS_DAYS),
        "full_confidence_events": FULL_CONFIDENCE_EVENTS,
        "default_credibility": DEFAULT_CREDIBILITY,
    }


def _sql_array(values: tuple[object, ...]) -> str:
    return f"[{', '.join(map(repr, values))}]"


def formula_sql() -> dict[str, str]:
    """What each {{placeholder}} of the formula's templates becomes, read from this module when called. The
    category columns are the view's category scores by name, in the order of CATEGORY_WEIGHTS; the window
    offsets are the current window's (0) and the trends'."""
    return {
        "categories": _sql_array(tuple(CATEGORY_WEIGHTS)),
        "category_weights": _sql_array(tuple(CATEGORY_WEIGHTS.values())),
        "category_columns": ",\n    ".join(
            f"category_scores[{position}] AS {category}" for position, category in enumerate(CATEGORY_WEIGHTS, start=1)
        ),
        "window_days": str(WINDOW_DAYS),
        "window_offsets": _sql_array((0, *TREND_OFFSETS_DAYS)),
        "full_confidence_events": repr(FULL_CONFIDENCE_EVENTS),
        "default_credibility": repr(DEFAULT_CREDIBILITY),
        "decay": DECAY_SQL,
        "reported_score": REPORTED_SCORE_SQL,
    }


# Sources (SPEC §7.1): the runs' own events, and signals posted before events recorded their source.
# Posted signals carry the id of the key that posted them.
REPUTE_SOURCE = "repute"
LEGACY_SOURCE = "legacy"

# Namespace of the deterministic ids of emitted events (UUIDv5 of tenant/reference/event type).
EVENT_NAMESPACE = uuid.UUID("6f1c1d7e-2d4b-5c59-9a51-7b1f3e0c8a10")


# Namespace of posted signals' stored ids (SPEC §7.1 "Ids"), apart from EVENT_NAMESPACE: a signal's id
# can never be one that a run, a rebuild or a retraction writes, so no client can pre-claim those.
SIGNAL_NAMESPACE = uuid.UUID("1be7c072-d173-4a2e-9c31-e52ddc1e974c")


def event_uuid(*parts: str) -> uuid.UUID:
    """A stable id: the same parts always give the same UUID, so re-emitting is a no-op."""
    return uuid.uuid5(EVENT_NAMESPACE, "/".join(parts))


def signal_uuid(tenant: str, source: str, client_id: str | None, content: str) -> uuid.UUID:
    """A posted signal's stored id: of the client's own id when it gave one, else of the signal's canonical
    content; per tenant and source, so one source's ids never shadow another's."""
    name = ["id", client_id] if client_id is not None else ["content", content]
    return uuid.uuid5(SIGNAL_NAMESPACE, orjson.dumps([tenant, source, *name]).decode())


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
    sign: int = 1  # -1: a retraction, which takes the event named by attributes['retracts'] out of every sum


def reported(value: float | None) -> float | None:
    """A figure as responses show it: rounded to REPORTED_DECIMALS (SPEC §7), None kept; exact values
    stay internal."""
    return None if value is None else round(value, REPORTED_DECIMALS)

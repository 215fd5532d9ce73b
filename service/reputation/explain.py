"""Why an identity's reputation is what it is (SPEC §7.1 explain), so that a drop reads as "run_trust fell
from X to Y; session_performance unchanged".

Per category and event type, for the current window and the one ending at the first trend offset before it:
the counted events (weight 0 included, capped ones and sources of credibility 0 left out), Σδ·c·w and Σc·w
with credibility and decay applied as in the score, the type's own score and its share of the category's
Σc·w. The category score is the share-weighted mean of its types' scores, so the shares say how much each
type's score weighs in it. Then the 10 references (runs, sessions, transactions ...; a signal posted without
one, under its event type) whose events moved the score most by |Σδ·c·w|, each with the points it adds to
the overall score, and per source the events the daily cap kept from counting. Figures are rounded for the
report; the sums behind them are exact (Decimal in the store).

Pure: it shapes the rows of sql/identity_explain.sql, which computes every figure with the model's formula;
service.services.reputation.explain reads them.
"""

from datetime import date
from typing import Any

from service.reputation import model
from service.reputation.model import CATEGORIES, reported

TOP_REFERENCES = 10
WINDOWS = {"current": 0, "7d_ago": model.TREND_OFFSETS_DAYS[0]}


def _score(row: dict[str, Any] | None) -> float | None:
    return reported(row["score"]) if row else None


def _window(row: dict[str, Any] | None, category: dict[str, Any] | None) -> dict[str, Any]:
    events, weighted_delta, weight = (row["events"], row["weighted_delta"], row["weight"]) if row else (0, 0.0, 0.0)
    category_weight = category["weight"] if category else 0.0
    return {
        "events": events,
        "weighted_delta": reported(weighted_delta),
        "weight": reported(weight),
        "score": _score(row),
        "share": reported(None if category_weight == 0 else weight / category_weight),
    }


def _category(types: list[dict[str, Any]], totals: list[dict[str, Any]]) -> dict[str, Any]:
    """One category's score in both windows (`totals`, the category rows) and each event type's part in it."""
    by_window = {
        name: {r["event_type"]: r for r in types if r["offset_days"] == offset} for name, offset in WINDOWS.items()
    }
    total = {name: next((r for r in totals if r["offset_days"] == offset), None) for name, offset in WINDOWS.items()}
    return {
        "score": _score(total["current"]),
        "score_7d_ago": _score(total["7d_ago"]),
        "event_types": {
            event_type: {name: _window(by_window[name].get(event_type), total[name]) for name in WINDOWS}
            for event_type in sorted({r["event_type"] for r in types})
        },
    }


def _points(references: list[dict[str, Any]], totals: list[dict[str, Any]]) -> None:
    """What each reference adds to the overall score as reported: its Σδ·c·w per category over the category's
    Σc·w in the current window (`totals`, the category rows), weighed as the categories with a Σc·w are in the
    overall score, on the reported scale; 0 when no category has one (the overall score is none)."""
    weights = {r["category"]: r["weight"] for r in totals if r["offset_days"] == 0 and r["weight"] != 0}
    total = sum(model.CATEGORY_WEIGHTS[category] for category in sorted(weights))
    for reference in references:
        moved = sorted(reference["moved_by_category"].items())
        share = (
            sum(model.CATEGORY_WEIGHTS[c] * m / weights[c] for c, m in moved if c in weights) / total if total else 0.0
        )
        reference["points"] = model.reported_score(share) - model.reported_score(0.0)


def _top_references(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """By |Σδ·c·w|, ties by what each adds to the overall score; a signal without a reference is named by
    its event type."""
    ranked = sorted(
        rows,
        key=lambda r: (-abs(r["weighted_delta"]), -abs(r["points"]), r["reference_type"], r["reference_id"],
                       r["event_type"]),
    )  # fmt: skip
    return [
        {
            "reference_type": r["reference_type"],
            "reference_id": r["reference_id"],
            "event_type": r["event_type"] or None,
            "events": r["events"],
            "weighted_delta": reported(r["weighted_delta"]),
            "weight": reported(r["weight"]),
            "points": reported(r["points"]),
        }
        for r in ranked[:TOP_REFERENCES]
    ]


def _change(event_type: str, windows: dict[str, Any]) -> str:
    """One event type's move over the last 7 days, in words."""
    now, before = windows["current"]["score"], windows["7d_ago"]["score"]
    if now is None and before is None:
        return f"{event_type} counts for nothing (weight 0)"
    if before is None:
        return f"{event_type} is new at {now:.1f}"
    if now is None:
        return f"{event_type} no longer counts (was {before:.1f})"
    if round(now, 1) == round(before, 1):
        return f"{event_type} unchanged at {now:.1f}"
    return f"{event_type} {'rose' if now > before else 'fell'} from {before:.1f} to {now:.1f}"


def changes(categories: dict[str, Any]) -> dict[str, str]:
    """Per category with events, its event types' moves in one line: "run_trust fell from 80.0 to
    60.0; session_performance unchanged at 70.0"."""
    return {
        category: "; ".join(_change(event_type, windows) for event_type, windows in part["event_types"].items())
        for category, part in categories.items()
        if part["event_types"]
    }


def explanation(identity: str, as_of: date, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON-ready explanation from the rows of sql/identity_explain.sql (pure)."""
    parts: dict[str, list[dict[str, Any]]] = {"event_type": [], "category": [], "reference": [], "capped": []}
    for row in rows:
        parts[row["part"]].append(row)
    _points(parts["reference"], parts["category"])
    categories = {
        c: _category(
            [r for r in parts["event_type"] if r["category"] == c], [r for r in parts["category"] if r["category"] == c]
        )
        for c in CATEGORIES
    }
    return {
        "identity": identity,
        "as_of": as_of.isoformat(),
        "window_days": model.WINDOW_DAYS,
        "categories": categories,
        "changes": changes(categories),
        "top_references": _top_references(parts["reference"]),
        "capped": [
            {"source": r["source"], "events": r["events"]}
            for r in sorted(parts["capped"], key=lambda r: (-r["events"], r["source"]))
        ],
    }

"""Session performance score (SPEC §5), accumulated record by record.

`SessionAccumulator` keeps sums, counts and the first/last time of one session (never the records),
so any number of records is scored in constant memory, and two accumulators of consecutive parts of
a log merge into the one of the whole. All arithmetic is exact (ints, Decimals, Fractions): see
`rounding`.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import MAX_PREC, Context, Decimal
from fractions import Fraction
from typing import Any

from service.judge.identity import DEFAULT_IDENTITY_RULE, IdentityRule
from service.judge.otlp import LogRecord
from service.judge.report import Layout, render_yaml
from service.judge.rounding import r, round_half_away
from service.otlp.values import ZERO, as_decimal, as_int, is_true

# Sums of amounts never round (the default context keeps 28 digits); `values` bounds the amounts.
EXACT = Context(prec=MAX_PREC)
NANOS_PER_MINUTE = 60 * 10**9
ONE_MINUTE = Decimal("1.0")
ZERO_SCORE, TEN = Decimal("0.0"), Decimal("10.0")
WEIGHTS = {
    "quality": Fraction("0.30"),
    "autonomy": Fraction("0.25"),
    "productivity": Fraction("0.20"),
    "token_efficiency": Fraction("0.15"),
    "cost_efficiency": Fraction("0.10"),
}
KEEP_AT, REVIEW_AT = 7, 4


@dataclass(frozen=True)
class SessionScore:
    """The §5 numbers of one session. Dimensions and composite keep one decimal; `duration_min` is
    the one-decimal value the dimensions used (shown as a whole number); `total_cost` is the exact sum
    (shown with two decimals); `prompts` and `total_tokens` are the §5 values (at least 1)."""

    masque: str
    session: str
    duration_min: Decimal
    dimensions: dict[str, Decimal]
    composite: Decimal
    recommendation: str
    total_cost: Decimal
    total_tools: int
    tools_ok: int
    prompts: int
    total_tokens: int
    cache_tokens: int

    @property
    def tool_success_pct(self) -> int:
        return int(round_half_away(Fraction(100 * self.tools_ok, max(1, self.total_tools)), 0))

    def layout(self) -> Layout:
        """The report's keys in order, with the values as shown (the YAML and the dict use this)."""
        return [
            ("masque", self.masque),
            ("session", self.session),
            ("duration_min", int(round_half_away(self.duration_min, 0))),
            ("dimensions", list(self.dimensions.items())),
            ("composite", self.composite),
            ("recommendation", self.recommendation),
            (
                "stats",
                [
                    ("total_cost", round_half_away(self.total_cost, 2)),
                    ("total_tools", self.total_tools),
                    ("tools_ok", self.tools_ok),
                    ("tool_success_pct", self.tool_success_pct),
                    ("prompts", self.prompts),
                    ("total_tokens", self.total_tokens),
                    ("cache_tokens", self.cache_tokens),
                ],
            ),
        ]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values: the same keys and numbers as the YAML."""
        return _plain(self.layout())

    def to_yaml(self) -> str:
        return render_yaml(self.layout())


class SessionAccumulator:
    """Running totals of one session."""

    __slots__ = (
        "cache_tokens",
        "first_time",
        "identity",
        "identity_rank",
        "identity_rule",
        "last_time",
        "prompts",
        "records",
        "session_id",
        "tools",
        "tools_ok",
        "total_cost",
        "total_tokens",
    )

    def __init__(self, session_id: str, identity_rule: IdentityRule = DEFAULT_IDENTITY_RULE) -> None:
        self.session_id = session_id
        self.identity_rule = identity_rule
        self.identity_rank = len(identity_rule.names)
        self.identity: str | None = None
        self.records = self.tools = self.tools_ok = self.prompts = 0
        self.total_tokens = self.cache_tokens = 0
        self.total_cost = ZERO
        self.first_time: int | None = None
        self.last_time: int | None = None

    def add(self, record: LogRecord) -> None:
        self.records += 1
        name, attributes = record.event_name, record.attributes
        if name == "tool_result":
            self.tools += 1
            self.tools_ok += is_true(attributes.get("success"))
        elif name == "api_request":
            self.total_tokens += as_int(attributes.get("input_tokens")) + as_int(attributes.get("output_tokens"))
            self.cache_tokens += as_int(attributes.get("cache_read_tokens"))
            self.total_cost = EXACT.add(self.total_cost, as_decimal(attributes.get("cost_usd")))
        elif name == "user_prompt":
            self.prompts += 1
        time = record.time_unix_nano
        if time is not None:
            self._see_time(time, time)
        if self.identity_rank and self.identity_rule.may_improve(record, self.identity_rank):
            found = self.identity_rule.find(record, self.identity_rank)
            if found is not None:
                self.identity_rank, self.identity = found

    def merge(self, later: "SessionAccumulator") -> None:
        """Fold in the totals of records that come after this one's (an equally ranked identity found
        earlier wins, as in a single pass)."""
        self.records += later.records
        self.tools += later.tools
        self.tools_ok += later.tools_ok
        self.prompts += later.prompts
        self.total_tokens += later.total_tokens
        self.cache_tokens += later.cache_tokens
        self.total_cost = EXACT.add(self.total_cost, later.total_cost)
        if later.first_time is not None and later.last_time is not None:
            self._see_time(later.first_time, later.last_time)
        if later.identity_rank < self.identity_rank:
            self.identity_rank, self.identity = later.identity_rank, later.identity

    def _see_time(self, first: int, last: int) -> None:
        if self.first_time is None or first < self.first_time:
            self.first_time = first
        if self.last_time is None or last > self.last_time:
            self.last_time = last

    def duration_min(self) -> Decimal:
        first, last = self.first_time, self.last_time
        elapsed = last - first if first is not None and last is not None else 0
        return max(ONE_MINUTE, r(Fraction(elapsed, NANOS_PER_MINUTE)))

    def score(self, masque: str | None = None) -> SessionScore:
        """The score; `masque` defaults to the session's identity ("unknown" when it has none)."""
        duration = self.duration_min()
        prompts, total_tokens = max(1, self.prompts), max(1, self.total_tokens)
        dimensions = {
            "quality": min(TEN, r(Fraction(10 * self.tools_ok, max(1, self.tools)))),
            "autonomy": min(TEN, r(Fraction(2 * self.tools, prompts))),
            "productivity": min(TEN, r(10 * self.tools_ok / Fraction(duration))),
            "token_efficiency": min(TEN, r(Fraction(10 * self.cache_tokens, total_tokens))),
            "cost_efficiency": _clamp(r(10 - 100 * Fraction(self.total_cost) / max(1, self.tools_ok))),
        }
        weighted = sum((WEIGHTS[name] * Fraction(value) for name, value in dimensions.items()), Fraction(0))
        return SessionScore(
            masque=masque or self.identity or "unknown",
            session=self.session_id,
            duration_min=duration,
            dimensions=dimensions,
            composite=r(weighted),
            recommendation=_recommendation(weighted),
            total_cost=self.total_cost,
            total_tools=self.tools,
            tools_ok=self.tools_ok,
            prompts=prompts,
            total_tokens=total_tokens,
            cache_tokens=self.cache_tokens,
        )


def score_session(
    session_id: str,
    records: Iterable[LogRecord],
    *,
    identity_rule: IdentityRule = DEFAULT_IDENTITY_RULE,
    masque: str | None = None,
) -> SessionScore:
    """The score of one session's records (e.g. those of one OTLP/HTTP request)."""
    accumulator = SessionAccumulator(session_id, identity_rule)
    for record in records:
        accumulator.add(record)
    return accumulator.score(masque)


def _clamp(value: Decimal) -> Decimal:
    return min(TEN, max(ZERO_SCORE, value))


def _recommendation(weighted: Fraction) -> str:
    if weighted >= KEEP_AT:
        return "keep"
    return "review" if weighted >= REVIEW_AT else "doff"


def _plain(layout: Layout) -> dict[str, Any]:
    return {key: _plain(value) if isinstance(value, list) else _number(value) for key, value in layout}


def _number(value: Any) -> Any:
    return float(value) if isinstance(value, Decimal) else value

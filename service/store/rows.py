"""Small conversions between Python values and ClickHouse columns."""

from datetime import UTC, datetime, timedelta
from typing import Any

from clickhouse_connect.driver.query import QueryResult

from service.vocab import EARLIEST, LATEST

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)


def from_epoch_ms(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC)


def epoch_ms(value: datetime) -> int:
    """An aware datetime as epoch milliseconds (floored), what a DateTime64(3) column holds."""
    return (value - _EPOCH) // _ONE_MS


def as_utc(value: datetime | None) -> datetime | None:
    """ClickHouse hands DateTime64(3, 'UTC') back naive; make it aware."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def dicts(result: QueryResult) -> list[dict[str, Any]]:
    names = result.column_names
    return [dict(zip(names, row, strict=True)) for row in result.result_rows]


def to_millis(value: datetime) -> datetime:
    """Truncated to DateTime64(3) precision, so what is returned equals what is stored."""
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def storable(value: datetime) -> bool:
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return EARLIEST <= aware < LATEST

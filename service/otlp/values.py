"""Attribute values read by meaning, whatever OTLP type carried them.

Emitters differ: `success` arrives as boolValue true or stringValue "true", `cost_usd` as stringValue
"0.0315" or doubleValue 0.0315, token counts as intValue (number or string) or stringValue.
Unreadable values count as absent (0 / false) rather than failing a whole session.
"""

from decimal import Decimal, InvalidOperation

from service.otlp.attributes import INT64_MAX, INT64_MIN, AttributeValue

_TRUE_STRINGS = frozenset({"true", "1"})
ZERO = Decimal(0)
# Amounts outside these bounds are absurd, and exact arithmetic on them (1e-999999999 or a number of
# a million digits as a Fraction) would not end in useful time: they count as unreadable.
_MAX_NUMBER_CHARS = 64
_MAX_ADJUSTED_EXPONENT = 18
_MIN_ADJUSTED_EXPONENT = -40


def is_true(value: AttributeValue) -> bool:
    """True for boolean true, the number 1 and the strings "true" / "1" (any case, spaces ignored)."""
    if type(value) is bool:
        return value
    if type(value) is str:
        return value.strip().lower() in _TRUE_STRINGS
    return type(value) is int and value == 1


def as_int(value: AttributeValue) -> int:
    """An integer count; a fractional number is truncated; anything else, or outside int64, is 0."""
    if type(value) is int:
        return value
    if type(value) is str:
        try:
            number = int(value)
        except ValueError:
            return int(as_decimal(value))
        return number if INT64_MIN <= number <= INT64_MAX else 0
    return int(as_decimal(value))


def as_decimal(value: AttributeValue) -> Decimal:
    """An exact amount. A double is read through its shortest repr, so doubleValue 0.0315 and
    stringValue "0.0315" give the same Decimal; non-finite, absurd or unreadable values are 0."""
    amount = _parse_decimal(value)
    if amount is None or not amount.is_finite():
        return ZERO
    return amount if _MIN_ADJUSTED_EXPONENT <= amount.adjusted() <= _MAX_ADJUSTED_EXPONENT else ZERO


def _parse_decimal(value: AttributeValue) -> Decimal | None:
    if type(value) is int:
        return Decimal(value)
    if type(value) is float:
        return Decimal(repr(value))
    if type(value) is not str or len(value) > _MAX_NUMBER_CHARS:
        return None
    try:
        return Decimal(value)  # surrounding whitespace is allowed
    except InvalidOperation:
        return None

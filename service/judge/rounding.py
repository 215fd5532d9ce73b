"""r() of SPEC §5: round half away from zero, computed exactly.

The score is computed in exact rationals (ints, Decimals and Fractions), so a value such as 8.45 is
exactly 8.45 and rounds to 8.5, never to 8.4 through a binary float that sits just below it.
A float passed in is read through its shortest repr (the number it prints as): r(0.25) = 0.3,
r(8.45) = 8.5, r(-0.25) = -0.3, although the binary double nearest to 8.45 is 8.4499999999999992...
"""

from decimal import Decimal
from fractions import Fraction
from math import floor

Exact = int | Decimal | Fraction


def round_half_away(value: Exact | float, places: int = 1) -> Decimal:
    """`value` rounded to `places` decimals, halves away from zero; the Decimal keeps exactly
    `places` decimals (r(9) = Decimal("9.0")) and zero has no sign."""
    exact = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    scaled = abs(exact) * 10**places
    magnitude = floor(scaled + Fraction(1, 2))
    return Decimal(magnitude if exact >= 0 else -magnitude).scaleb(-places)


def r(value: Exact | float) -> Decimal:
    """SPEC §5's r(): one decimal, half away from zero."""
    return round_half_away(value, 1)

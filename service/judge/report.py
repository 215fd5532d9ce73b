"""The judge's YAML, written by hand: the key order and the number formats are part of the contract,
and the runtime has no YAML library."""

import re
from decimal import Decimal
from typing import TypeAlias

Scalar: TypeAlias = str | int | Decimal
Layout: TypeAlias = list[tuple[str, "Scalar | Layout"]]

INDENT = "  "
# A string starting with a letter and made of these characters is read back as that string by any
# YAML 1.1 or 1.2 loader, unless it is one of the reserved words below.
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_.@/+-]*")
_RESERVED = frozenset(
    word
    for base in ("true", "false", "yes", "no", "on", "off", "null", "y", "n")
    for word in (base, base.capitalize(), base.upper())
)
# Inside double quotes: the quote and backslash, and every character YAML does not allow there
# unescaped or would read as a line break (NEL, LS, PS) or a byte order mark.
_TO_ESCAPE = re.compile('["\\\\]|[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]')


def render_yaml(layout: Layout) -> str:
    return "".join(_lines(layout, ""))


def _lines(layout: Layout, indent: str) -> list[str]:
    lines = []
    for key, value in layout:
        if isinstance(value, list):
            lines.append(f"{indent}{key}:\n")
            lines.extend(_lines(value, indent + INDENT))
        else:
            lines.append(f"{indent}{key}: {yaml_scalar(value)}\n")
    return lines


def yaml_scalar(value: Scalar) -> str:
    """Numbers as written (a Decimal keeps its decimals); strings plain when that reads back as the
    same string, else double-quoted."""
    if not isinstance(value, str):
        return str(value)
    if _PLAIN.fullmatch(value) and value not in _RESERVED:
        return value
    return '"' + _TO_ESCAPE.sub(_escape, value) + '"'


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in '"\\':
        return "\\" + char
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"

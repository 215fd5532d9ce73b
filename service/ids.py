"""Identifiers that reach storage: identities, run ids, tenants, suites, task ids."""

import re
from typing import Annotated

from pydantic import StringConstraints

from service.errors import FieldError

ID_PATTERN = r"^[A-Za-z0-9._:@/+\-]{1,256}$"
_ID = re.compile(ID_PATTERN)
ID_RULE = "1 to 256 characters of A-Z a-z 0-9 . _ : @ / + -"

Identifier = Annotated[str, StringConstraints(pattern=ID_PATTERN)]


class InvalidIdentifier(FieldError):
    def __init__(self, field: str, value: object) -> None:
        super().__init__(field, f"{field} must be {ID_RULE}; got {str(value)[:60]!r}")


def check_id(value: object, field: str) -> str:
    if not isinstance(value, str) or not _ID.match(value):
        raise InvalidIdentifier(field, value)
    return value


def check_optional_id(value: object, field: str) -> str:
    """'' or None mean absent."""
    if value is None or value == "":
        return ""
    return check_id(value, field)

"""Identifiers that reach storage: identities, run ids, tenants, suites, task ids, signals' references,
diagnosis profiles.

Every check is a full match: a `$` anchor would also accept a trailing newline ("agent\\n").
Run ids (and OTLP session ids, which are run ids) hold no `/`: a run's URL may end in `/graph` or
`/events`, so `a/graph` could never be read back as a run.
"""

import re
from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

from service.errors import FieldError

_ID = re.compile(r"[A-Za-z0-9._:@/+\-]{1,256}")
_NOT_IN_ID = re.compile(r"[^A-Za-z0-9._:@/+\-]+")
MAX_ID_CHARS = 256
_RUN_ID = re.compile(r"[A-Za-z0-9._:@+\-]{1,256}")
_OPTIONAL_ID = re.compile(r"[A-Za-z0-9._:@/+\-]{0,256}")
_PROFILE = re.compile(r"[A-Za-z0-9._\-]{1,64}")
_IDENTITY_PATTERN = re.compile(r"[A-Za-z0-9._:@/+\-*?\[\]!]{1,256}")
ID_RULE = "1 to 256 characters of A-Z a-z 0-9 . _ : @ / + -"
OPTIONAL_ID_RULE = "empty, or " + ID_RULE
RUN_ID_RULE = "1 to 256 characters of A-Z a-z 0-9 . _ : @ + - (no /)"
PROFILE_RULE = "1 to 64 characters of A-Z a-z 0-9 . _ -"
IDENTITY_PATTERN_RULE = "an identity, or a glob of one: 1 to 256 characters of A-Z a-z 0-9 . _ : @ / + - * ? [ ] !"


class InvalidIdentifier(FieldError):
    def __init__(self, field: str, value: object, rule: str) -> None:
        super().__init__(field, f"{field} must be {rule}; got {str(value)[:60]!r}")


def _checked(value: object, field: str, pattern: re.Pattern[str], rule: str) -> str:
    if not isinstance(value, str) or pattern.fullmatch(value) is None:
        raise InvalidIdentifier(field, value, rule)
    return value


def check_id(value: object, field: str) -> str:
    return _checked(value, field, _ID, ID_RULE)


def as_identity(name: str) -> str:
    """A name made a valid identity (SPEC §3.5: an agent's name read from a trace): each run of characters
    an identity does not hold becomes `-` (`Hello world` → `Hello-world`), cut to 256 characters."""
    return _NOT_IN_ID.sub("-", name)[:MAX_ID_CHARS]


def check_run_id(value: object, field: str) -> str:
    return _checked(value, field, _RUN_ID, RUN_ID_RULE)


def is_run_id(value: str) -> bool:
    return _RUN_ID.fullmatch(value) is not None


def check_optional_id(value: object, field: str) -> str:
    """'' or None mean absent."""
    if value is None or value == "":
        return ""
    return check_id(value, field)


def _validator(pattern: re.Pattern[str], rule: str) -> Callable[[str], str]:
    def validate(value: str) -> str:
        if pattern.fullmatch(value) is None:
            raise ValueError(f"must be {rule}")
        return value

    return validate


def _schema(pattern: re.Pattern[str]) -> WithJsonSchema:
    return WithJsonSchema({"type": "string", "pattern": f"^{pattern.pattern}$"})


# Pydantic field types with the same full match (the schema shows the pattern for clients).
Identifier = Annotated[str, AfterValidator(_validator(_ID, ID_RULE)), _schema(_ID)]
RunIdentifier = Annotated[str, AfterValidator(_validator(_RUN_ID, RUN_ID_RULE)), _schema(_RUN_ID)]
# An id that may be absent (""), e.g. a signal's reference_id: never a spreadsheet formula or a tab.
OptionalIdentifier = Annotated[str, AfterValidator(_validator(_OPTIONAL_ID, OPTIONAL_ID_RULE)), _schema(_OPTIONAL_ID)]
ProfileName = Annotated[str, AfterValidator(_validator(_PROFILE, PROFILE_RULE)), _schema(_PROFILE)]
IdentityPattern = Annotated[
    str, AfterValidator(_validator(_IDENTITY_PATTERN, IDENTITY_PATTERN_RULE)), _schema(_IDENTITY_PATTERN)
]

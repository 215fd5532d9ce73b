"""The registry's failure types as a StrEnum, for the API's filters and the CLI's options: they list and
validate the names, and a new detector adds its own."""

from enum import StrEnum

from service.diagnosis.detectors import FAILURE_TYPES

# mypy cannot list members built from the registry; the enum has one member per FAILURE_TYPES name.
FailureType = StrEnum("FailureType", [(name, name) for name in FAILURE_TYPES])  # type: ignore[misc]

"""The one error the diagnosis package raises for input it cannot use."""

from service.errors import FieldError


class InputError(FieldError):
    """Input that is not a run SPEC §3.1 accepts.

    `field` names the offending place as a path ("events[3]", "events[3].timestamp", "sessions[1].events");
    "" means the body as a whole (not JSON, not a run: 400). The message is one line and does not repeat
    the field.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(field, message)
        self.status = 422 if field else 400

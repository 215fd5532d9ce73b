"""The one error the diagnosis package raises for input it cannot use."""


class InputError(ValueError):
    """Input that is not a run SPEC §3.1 accepts.

    `field` names the offending place as a path ("events[3]", "events[3].timestamp", "sessions[1].events");
    "" means the body as a whole (not JSON, not a run). The message is one line and does not repeat the field.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field

    def located(self) -> str:
        """'events[3].timestamp: <message>', or just the message when the whole body is at fault."""
        return f"{self.field}: {self}" if self.field else str(self)

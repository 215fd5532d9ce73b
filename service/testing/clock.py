"""A clock for tests of code that reads `time.monotonic` or sleeps: it moves only when told to."""


class FakeClock:
    """`monotonic()` answers `now`; `sleep(seconds)` moves it on at once. Pass `clock.monotonic` where a clock
    is taken, or the clock itself where the `time` module is used."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

"""A value computed on an instance's first read and kept in its `__dict__`, as `functools.cached_property`
keeps it, without that class's lock.

On Python 3.11, `cached_property` computes under one lock per property, shared by every instance of the
class (Python 3.12 dropped it): while one tenant's 10,000-event run builds its diagnosis's canonical JSON, any
other tenant's run waits to build its own. Two threads that read one instance's value at once may both
compute it; what these values are made from never changes, so both compute the same value and one is kept.
"""

from collections.abc import Callable
from typing import Any, Generic, Self, TypeVar, overload

Value = TypeVar("Value")


class memoized(Generic[Value]):
    def __init__(self, compute: Callable[[Any], Value]) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> Value: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> "Value | Self":
        if instance is None:
            return self
        # A non-data descriptor: once the value is in the instance's __dict__, reads find it there first.
        value = instance.__dict__[self.name] = self.compute(instance)
        return value

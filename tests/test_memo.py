"""service.memo: a value computed once per instance, and no instance's computation holds up another's (the
lock of Python 3.11's functools.cached_property is one per class: a tenant's long diagnosis held up every
other tenant's)."""

import ast
import threading
from pathlib import Path

from service.memo import memoized

BOUND_SECONDS = 10.0  # a wait that only a held-up read reaches
PACKAGE = Path(__file__).resolve().parents[1] / "service"


class Counted:
    def __init__(self, name: str, gate: threading.Event | None = None) -> None:
        self.name = name
        self.gate = gate
        self.computed = 0
        self.entered = threading.Event()

    @memoized
    def value(self) -> str:
        """The name, once the gate opens."""
        self.computed += 1
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(BOUND_SECONDS)
        return self.name.upper()


def test_the_value_is_computed_on_first_read_and_kept() -> None:
    counted = Counted("a")
    assert counted.computed == 0
    assert (counted.value, counted.value) == ("A", "A")
    assert counted.computed == 1
    assert Counted.value.__doc__ == "The name, once the gate opens."


def test_one_instance_computing_holds_up_no_other() -> None:
    gate = threading.Event()
    slow, quick = Counted("slow", gate), Counted("quick")
    computing = threading.Thread(target=lambda: slow.value)
    computing.start()
    try:
        assert slow.entered.wait(BOUND_SECONDS)
        read: list[str] = []
        reader = threading.Thread(target=lambda: read.append(quick.value))
        reader.start()
        reader.join(BOUND_SECONDS)
        assert read == ["QUICK"], "the read of one instance waited for another instance's computation"
        assert not gate.is_set() and computing.is_alive()
    finally:
        gate.set()
        computing.join(BOUND_SECONDS)
    assert slow.value == "SLOW" and slow.computed == 1


def test_no_module_of_the_service_uses_cached_property() -> None:
    """A module that imported functools.cached_property would bring the class-wide lock back."""
    using = [
        f"{path.relative_to(PACKAGE)} line {node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if _names_cached_property(node)
    ]
    assert not using, f"use service.memo.memoized: {using}"


def _names_cached_property(node: ast.AST) -> bool:
    """`from functools import cached_property`, or `functools.cached_property`."""
    if isinstance(node, ast.ImportFrom):
        return node.module == "functools" and any(alias.name == "cached_property" for alias in node.names)
    return isinstance(node, ast.Attribute) and node.attr == "cached_property"

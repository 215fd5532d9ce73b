"""The layers hold: no module imports a higher layer, routers never reach the store, and the engine
never touches FastAPI or ClickHouse. Walks every import statement of the package (also those inside
functions), so a shortcut fails here with the module and the line."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "service"

# Lowest first. A module may import its own layer and the layers below it.
LAYERS: tuple[tuple[str, ...], ...] = (
    # pure cores: no I/O beyond what they are handed
    ("vocab", "errors", "ids", "settings", "periodic", "deadlines", "priority", "diagnosis", "judge", "outcome", "gate",
     "run_report", "reputation", "traces", "otlp", "profiles"),
    ("store",),  # repositories: SQL over ClickHouse
    ("services", "alerts"),  # use cases: the only callers of the store
    ("api", "client", "cli", "terminal", "server", "grafana", "codegen", "testing", "__main__", "__init__"),
)  # fmt: skip
LAYER_OF = {name: rank for rank, names in enumerate(LAYERS) for name in names}
ENGINE_FORBIDDEN = ("fastapi", "starlette", "clickhouse_connect", "chdb", "service.store", "service.api")


def _top(module_path: Path) -> str:
    parts = module_path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def _service_target(name: str) -> str | None:
    """'service.store.runs.x' -> 'store'; None for imports from outside the package."""
    parts = name.split(".")
    if parts[0] != "service" or len(parts) < 2:
        return None
    return parts[1]


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_top_level_module_has_a_layer() -> None:
    unplaced = sorted({_top(path) for path in MODULES} - set(LAYER_OF))
    assert not unplaced, f"give these a layer in tests/test_layers.py: {unplaced}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_higher_layer(path: Path) -> None:
    own = LAYER_OF[_top(path)]
    wrong = [
        f"line {line}: {name}"
        for line, name in _imports(path)
        if (target := _service_target(name)) is not None and target in LAYER_OF and LAYER_OF[target] > own
    ]
    assert not wrong, f"{path.relative_to(PACKAGE)} imports a higher layer: {wrong}"


def test_routers_never_reach_the_store() -> None:
    wrong = [
        f"{path.relative_to(PACKAGE)} line {line}: {name}"
        for path in sorted((PACKAGE / "api" / "routers").glob("*.py"))
        for line, name in _imports(path)
        if name.startswith("service.store")
    ]
    assert not wrong, f"routers call services, never the store: {wrong}"


def test_the_engine_touches_no_web_framework_or_store() -> None:
    wrong = [
        f"{path.relative_to(PACKAGE)} line {line}: {name}"
        for path in sorted((PACKAGE / "diagnosis").rglob("*.py"))
        for line, name in _imports(path)
        if name.startswith(ENGINE_FORBIDDEN)
    ]
    assert not wrong, wrong


def test_the_layer_check_catches_an_upward_import(tmp_path: Path) -> None:
    """The walker sees imports inside functions too (a lazy import is still a dependency)."""
    module = tmp_path / "sample.py"
    module.write_text("def f():\n    from service.api.app import create_app\n    return create_app\n")
    assert [(line, name) for line, name in _imports(module)] == [(2, "service.api.app.create_app")]
    assert _service_target("service.api.app.create_app") == "api"

"""The layers hold: no module imports a higher layer, routers never reach the store, the engine never
touches FastAPI or ClickHouse, no two modules import each other (directly or round a circle), and one
module inserts rows. Walks every import statement of the package (also those inside functions), so a
shortcut fails here with the module and the line."""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "service"

# Lowest first. A module may import its own layer and the layers below it.
LAYERS: tuple[tuple[str, ...], ...] = (
    # pure cores: no I/O beyond what they are handed
    ("vocab", "errors", "ids", "settings", "periodic", "deadlines", "priority", "collector", "memo", "diagnosis",
     "judge", "outcome", "gate", "run_report", "reputation", "traces", "otlp", "profiles", "model", "statements"),
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


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports. `from package import name` depends on the module
    `package.name` when there is one, else on the package; a module's own parent packages are left out
    (Python imports them first whatever the module imports)."""
    names = {_module_name(path): path for path in MODULES}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        parents = {".".join(name.split(".")[:depth]) for depth in range(1, name.count(".") + 1)}
        targets = set()
        for _, imported in _imports(path):
            target = imported if imported in names else imported.rsplit(".", 1)[0]
            if target in names and target != name and target not in parents:
                targets.add(target)
        graph[name] = targets
    return graph


def _circles(graph: dict[str, set[str]]) -> Iterator[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    yield sorted(component)


def test_no_import_circle() -> None:
    assert list(_circles(_import_graph())) == []


def test_the_circle_check_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert list(_circles(graph)) == [["a", "b", "c"]]


WRITER = PACKAGE / "store" / "writer.py"


def _insert_calls(path: Path) -> list[int]:
    """Lines calling `<something>.insert(...)`: ClickHouse inserts (clickhouse-connect's and the Store's)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "insert"
    ]


def test_one_module_inserts_rows() -> None:
    """service/store/writer.py owns every insert (issue #39); the Store's own insert is what it calls."""
    owners = {WRITER, PACKAGE / "store" / "client.py"}
    wrong = [f"{path.relative_to(PACKAGE)} line {line}" for path in MODULES if path not in owners
             for line in _insert_calls(path)]  # fmt: skip
    assert not wrong, f"insert through service/store/writer.py: {wrong}"
    assert _insert_calls(WRITER)

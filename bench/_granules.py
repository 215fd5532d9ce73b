"""What each of `python -m bench scale`'s reads costs the engine, as `EXPLAIN indexes = 1` says: for every
table a read's queries read, the parts and index granules selected of those there are
(`python -m bench scale --store DIR --granules`). A read is run once through the service's own function on
a store that notes each query it sends; each is then explained with the same parameters."""

import re
from collections.abc import Callable
from typing import Any

from clickhouse_connect.driver.client import Client

from service.store.client import Store

Query = tuple[str, dict[str, Any] | None]
_READ = re.compile(r"ReadFromMergeTree \((?:\w+\.)?(\w+)\)")
# A plan nested in joins or unions draws its tree before each line ("│  │   Parts: 1/3").
_SELECTED = re.compile(r"^[\s│├└─]*(Parts|Granules): (\d+/\d+)\s*$")


class _Noting:
    """A client that notes every query (text and parameters) before running it."""

    def __init__(self, client: Client, noted: list[Query]) -> None:
        self._client, self._noted = client, noted

    def query(self, sql: str, parameters: dict[str, Any] | None = None, **rest: Any) -> Any:
        self._noted.append((sql, parameters))
        return self._client.query(sql, parameters=parameters, **rest)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class NotingStore(Store):
    """A store whose clients note the queries its reads run (`noted`), on every thread."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.noted: list[Query] = []  # before the store's own setup, which already queries
        super().__init__(*args, **kwargs)

    @property
    def client(self) -> Any:
        return _Noting(super().client, self.noted)


def selected(store: Store, query: Query) -> list[tuple[str, str, str]]:
    """(table, parts, granules) for each table the query reads: the last index's selection of each."""
    sql, parameters = query
    plan = store.client.query(f"EXPLAIN indexes = 1 {sql}", parameters=parameters).result_rows
    found: list[list[str]] = []
    for (line,) in plan:
        if read := _READ.search(line):
            found.append([read.group(1), "", ""])
        elif found and (chosen := _SELECTED.match(line)):
            found[-1][1 if chosen.group(1) == "Parts" else 2] = chosen.group(2)
    return [(table, parts, granules) for table, parts, granules in found]


def granules(store: NotingStore, reads: dict[str, Callable[[], object]]) -> list[tuple[str, str, str]]:
    """Per read (its name) and table: "parts a/b, granules c/d" selected by the indexes."""
    rows = []
    for name, read in reads.items():
        store.noted = []
        read()
        queries, store.noted = store.noted, []  # the EXPLAINs below are noted too, apart
        for query in queries:
            for table, parts, chosen in selected(store, query):
                rows.append((f"{name}: {table}", f"parts {parts}, granules {chosen}", "-"))
    return rows

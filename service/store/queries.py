"""Named read queries: sql/<name>.sql, shared by the API, the alerts and the Grafana dashboards.

They ship inside the package (service/sql), so they are read through importlib.resources: the same code
works from the checkout, an editable install and an installed wheel.
"""

import re
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable

QUERIES: Traversable = files("service") / "sql"
# Folders and a file stem, lowercase words only: no `..`, no absolute path, nothing outside sql/.
_QUERY_NAME = re.compile(r"[a-z0-9_]+(/[a-z0-9_]+)*")


@cache
def source(name: str) -> str:
    """The text of sql/<name>.sql as written (name may include a subfolder, e.g. 'alerts/unsafe_share'): what a
    reader sees, such as a Grafana panel's query."""
    if not _QUERY_NAME.fullmatch(name):
        raise ValueError(f"not a query name under sql/: {name!r}")
    *folders, stem = name.split("/")
    return QUERIES.joinpath(*folders, f"{stem}.sql").read_text(encoding="utf-8")


@cache
def load(name: str) -> str:
    """sql/<name>.sql as the service sends it: without its whole-line comments, which the client library and
    the engine's parser would read on every statement (a few milliseconds for the longest, bench/README.md
    "The explanation's planning")."""
    return without_comment_lines(source(name))


def without_comment_lines(sql: str) -> str:
    """`sql` without the lines that hold only a `--` comment."""
    return "".join(line for line in sql.splitlines(keepends=True) if not line.lstrip().startswith("--"))

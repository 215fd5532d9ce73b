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
def load(name: str) -> str:
    """The text of sql/<name>.sql (name may include a subfolder, e.g. 'alerts/unsafe_share')."""
    if not _QUERY_NAME.fullmatch(name):
        raise ValueError(f"not a query name under sql/: {name!r}")
    *folders, stem = name.split("/")
    return QUERIES.joinpath(*folders, f"{stem}.sql").read_text(encoding="utf-8")

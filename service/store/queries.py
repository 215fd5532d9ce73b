"""Named read queries: sql/<name>.sql, shared by the API, the alerts and the Grafana dashboards."""

from functools import cache
from pathlib import Path

SQL_DIR = Path(__file__).resolve().parents[2] / "sql"


@cache
def load(name: str) -> str:
    """The text of sql/<name>.sql (name may include a subfolder, e.g. 'alerts/unsafe_share')."""
    path = (SQL_DIR / f"{name}.sql").resolve()
    if SQL_DIR not in path.parents:
        raise ValueError(f"query name outside sql/: {name}")
    return path.read_text()

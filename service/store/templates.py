"""SQL templates: `{{placeholder}}` rendering and statements split from a file, shared by the migrations,
the repeatable definitions and the named queries that render parts in (service.store.runs).

A statement is rendered for the deployment the settings name: as written on one machine, or for a
ClickHouse cluster (service.store.cluster).
"""

import re

from service.settings import Settings
from service.store.cluster import for_cluster
from service.store.queries import without_comment_lines

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


def template_values(settings: Settings) -> dict[str, str]:
    """What each {{placeholder}} of a migration becomes. A line starting with {{embedded_only}}, a whole
    statement, runs on the embedded engine only: on a server it becomes a comment, which is not executed."""
    return {
        "embedded_only": "" if settings.embedded else "-- on the embedded engine only: ",
        "on_cluster": f"ON CLUSTER {settings.cluster}" if settings.cluster else "",
        "replicated": "Replicated" if settings.cluster else "",
        "run_events_ttl_days": str(int(settings.run_events_ttl_days)),
        "reputation_refresh_seconds": str(int(settings.reputation_refresh_seconds)),
        "reputation_half_life_days": repr(float(settings.reputation_half_life_days or 0)),
    }


def render(sql: str, values: dict[str, str]) -> str:
    def substitute(match: re.Match[str]) -> str:
        return values[match.group(1)]

    return _PLACEHOLDER.sub(substitute, sql)


def statements(sql: str, settings: Settings, database: str) -> list[str]:
    """A template's statements rendered for the settings' deployment: as written, or for the cluster
    (service.store.cluster)."""
    rendered = split_statements(render(sql, template_values(settings)))
    if not settings.cluster:
        return rendered
    return [each for statement in rendered for each in for_cluster(statement, database)]


def split_statements(sql: str) -> list[str]:
    """Statements end with `;` at the end of a line; comment-only chunks are dropped."""
    chunks = re.split(r";\s*$", sql, flags=re.MULTILINE)
    statements = []
    for chunk in chunks:
        code = without_comment_lines(chunk).strip()
        if code:
            statements.append(code)
    return statements

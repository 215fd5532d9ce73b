"""SQL for the raw OTLP records of sessions."""

from collections.abc import Sequence
from datetime import datetime

from service.store.client import Store
from service.store.queries import load


def load_payloads(store: Store, tenant: str, session_id: str) -> list[bytes]:
    result = store.client.query(
        "SELECT payload FROM session_records WHERE tenant = {tenant:String} AND session_id = {session_id:String}"
        " ORDER BY record_id LIMIT 1 BY record_id",
        parameters={"tenant": tenant, "session_id": session_id},
    )
    return [row[0].encode() for row in result.result_rows]


def event_counts(store: Store, tenant: str, session_ids: Sequence[str]) -> dict[str, int]:
    """The run events the stored records of each session map to (a resent record counted once)."""
    if not session_ids:
        return {}
    result = store.client.query(
        "SELECT session_id, sum(event_count) FROM ("
        " SELECT session_id, event_count FROM session_records"
        " WHERE tenant = {tenant:String} AND session_id IN {session_ids:Array(String)}"
        " LIMIT 1 BY session_id, record_id"
        ") GROUP BY session_id",
        parameters={"tenant": tenant, "session_ids": list(session_ids)},
    )
    return {session_id: int(total) for session_id, total in result.result_rows}


def idle_sessions(store: Store, cutoff: datetime) -> list[tuple[str, str]]:
    result = store.client.query(load("idle_sessions"), parameters={"cutoff": cutoff})
    return [(tenant, run_id) for tenant, run_id in result.result_rows]

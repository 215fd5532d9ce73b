"""Suite summaries: JSON, or the text form of SPEC §6 with ?format=text."""

from typing import Any, Literal

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from service.api.deps import Read, StoreDep
from service.api.errors import Problem
from service.api.openapi import NOT_FOUND
from service.api.routing import KeyFirstRoute
from service.services.suites import suite_summary

router = APIRouter(prefix="/v1", tags=["suites"], route_class=KeyFirstRoute)


@router.get(
    "/suites/{suite:path}/summary",
    summary="Suite summary: tasks after trial aggregation, execution errors kept apart",
    responses={200: {"content": {"text/plain": {}}}, **NOT_FOUND},
)
def get_summary(
    suite: str,
    principal: Read,
    store: StoreDep,
    format: Literal["json", "text"] = "json",
) -> Any:
    summary = suite_summary(store, principal.tenant, suite)
    if summary is None:
        raise Problem(404, "Not Found", f"no finalized run in suite {suite!r}")
    if format == "text":
        return PlainTextResponse(summary.to_text() + "\n")
    return summary.to_dict()

"""The run explorer: static pages for people at /ui (runs, run detail, agent health, fleet).

/ui needs no key, on purpose: it serves only the HTML, JavaScript and CSS shipped in this package,
which hold no data. The page asks the user once for an API key, keeps it in the browser's
localStorage and sends it as `Authorization: Bearer` on every data call to /v1, so every number on
the page sits behind the same auth, scopes and tenant isolation as any other API client.

The assets are plain ES modules and CSS with no build step, and a Content-Security-Policy keeps the
page to its own origin: nothing is fetched from the network but these files and the API. The agent page
links to `reputation.md`, docs/reputation.md (a link in the checkout, a copy in the wheel), served as
plain text so that every browser shows it rather than downloading it.
"""

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

ASSETS = Path(__file__).resolve().parents[1] / "ui"
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class UiFiles(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if path.endswith(".md") and response.status_code == 200:
            response.headers["Content-Type"] = "text/plain; charset=utf-8"
        response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response


def install(app: FastAPI) -> None:
    """Serves the explorer at /ui/ (and sends / and /ui there, so relative asset paths resolve)."""

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    @app.api_route("/ui", methods=["GET", "HEAD"], include_in_schema=False)
    def ui_root(request: Request) -> RedirectResponse:
        return RedirectResponse(f"{request.scope.get('root_path', '')}/ui/")

    # The checkout's reputation.md is a link to docs/ (the only link among the assets, all shipped here).
    app.mount("/ui", UiFiles(directory=ASSETS, html=True, follow_symlink=True), name="ui")

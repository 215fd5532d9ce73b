"""/docs: the Swagger UI served from this package's dependencies (swagger-ui-bundle), never from a CDN, so
the API's documentation works on a machine without internet access."""

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

DOCS_PATH = "/docs"
ASSETS_PATH = "/docs/assets"


def install(app: FastAPI) -> None:
    """Serves the Swagger UI page at /docs and its scripts and styles under /docs/assets."""
    app.mount(ASSETS_PATH, StaticFiles(directory=str(swagger_ui_path)), name="swagger-ui")

    @app.get(DOCS_PATH, include_in_schema=False)
    def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "").rstrip("/")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} · API docs",
            swagger_js_url=f"{root}{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_PATH}/favicon-32x32.png",
            swagger_ui_parameters={"validatorUrl": None},  # the default badge calls an online validator
        )

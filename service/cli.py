"""The `repute` command line. Each command is thin: it parses options and calls a service module."""

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Repute: agent run diagnosis and reputation.")


@app.callback()
def _root() -> None:
    """Repute: agent run diagnosis and reputation."""


def main() -> None:
    app()

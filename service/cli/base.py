"""What every `repute` command shares: the app and its groups, help without type placeholders, the
consoles, one-line errors and exit codes, and the way a command reaches the API (a running server, else
the app in this process).

Exit codes, the same for every command: 0 done; 1 a negative answer (not found, a gate that fails, a
status that is not healthy); 2 the command could not do what was asked (a usage error, bad input, a
file that failed, a store or server that refused or could not be reached). Errors are one line on
stderr, never a traceback.
"""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from typer.core import TyperArgument, TyperCommand, TyperGroup

from service import __version__
from service.settings import get_settings
from service.terminal import MISSING

if TYPE_CHECKING:
    from service.client import ApiClient

OK, NEGATIVE, USAGE = 0, 1, 2


def _no_type_placeholders(params: list[Any]) -> list[Any]:
    """Help shows names, never type placeholders: a flag takes no value (Typer would print `<bool>`), and
    an argument's metavar already says what it is (Typer would add `<path>`)."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
        elif isinstance(param, TyperArgument):
            param.display_type_rich = _no_type  # type: ignore[method-assign]
    return params


def _no_type(ctx: Any) -> None:
    return None


class _Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _no_type_placeholders(super().get_params(ctx))


class _Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _no_type_placeholders(super().get_params(ctx))


class _DefaultCommandGroup(_Group):
    """A group whose arguments go to its first command when they name none of its commands:
    `repute reputation ID` is `repute reputation show ID` (an identity named like a command is given
    with `show`). `--help` alone is the group's."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if self.goes_to_the_first(ctx, args):
            args = [next(iter(self.commands)), *args]
        return super().parse_args(ctx, args)

    def goes_to_the_first(self, ctx: Any, args: list[str]) -> bool:
        return bool(args) and args[0] not in self.commands and args[0] not in ctx.help_option_names


class _ListingGroup(_DefaultCommandGroup):
    """A listing with commands beside it: `repute runs` and `repute runs --help` are `repute runs list`'s,
    whose help names the others (`repute runs show ID`)."""

    def goes_to_the_first(self, ctx: Any, args: list[str]) -> bool:
        return not args or args[0] not in self.commands


class _Typer(typer.Typer):
    def command(self, *args: Any, **kwargs: Any) -> Any:
        return super().command(*args, cls=_Command, **kwargs)


def choice(enum: type[StrEnum], metavar: str, *names: str, help: str = "") -> Any:
    """An option with a fixed set of values: a short metavar, and the values listed in its help, where
    they wrap between values, never inside one."""
    listed = "one of " + ", ".join(enum)
    return typer.Option(*names, metavar=metavar, help=f"{help}; {listed}" if help else listed)


app = _Typer(cls=_Group, no_args_is_help=True, help="Repute: agent run diagnosis and reputation.")
keys_app = _Typer(cls=_Group, no_args_is_help=True, help="Manage API keys.")
app.add_typer(keys_app, name="keys")
reputation_app = _Typer(
    cls=_DefaultCommandGroup,
    no_args_is_help=True,
    help="An identity's reputation (`repute reputation ID` is short for `show ID`); `rebuild` (admin).",
)
app.add_typer(reputation_app, name="reputation")
runs_app = _Typer(cls=_ListingGroup, help="List runs (`repute runs`), or show one: `repute runs show ID`.")
app.add_typer(runs_app, name="runs")
profiles_app = _Typer(cls=_Group, no_args_is_help=True, help="Diagnosis profiles and where they apply (admin).")
app.add_typer(profiles_app, name="profiles")
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="machine-stable JSON")]
WideFlag = Annotated[
    bool, typer.Option("--wide", help="one line per row, however long (else long cells wrap between words)")
]
CursorOption = Annotated[
    str | None, typer.Option(metavar="CURSOR", help="where the last listing stopped (its hint names it)")
]
AllFlag = Annotated[bool, typer.Option("--all", help="every row, page after page")]


def _print_version(wanted: bool) -> None:
    if wanted:
        out.print(f"repute {__version__}", highlight=False)
        raise typer.Exit()


# The server `--url` names for this invocation (None: found, see service.client.open_client).
_given_url: str | None = None


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    url: Annotated[
        str | None,
        typer.Option(
            "--url", metavar="URL", help="the server to use (REPUTE_URL); default: the one that owns the store"
        ),
    ] = None,
) -> None:
    """Repute: agent run diagnosis and reputation."""
    global _given_url
    _given_url = url


def given_url() -> str | None:
    """The server `--url` named for this invocation (None: found, see service.client.open_client)."""
    return _given_url


def fail(message: str, code: int = USAGE) -> NoReturn:
    """One line on stderr and an exit code; never a traceback."""
    err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def not_found(message: str) -> NoReturn:
    fail(message, NEGATIVE)


@contextmanager
def store_errors() -> Iterator[None]:
    """A store that cannot be opened, migrated or queried is one line and exit 2."""
    from clickhouse_connect.driver.exceptions import ClickHouseError

    from service.errors import MigrationError, StoreUnavailable
    from service.store.client import one_line

    try:
        yield
    except (StoreUnavailable, MigrationError) as exc:
        fail(str(exc))
    except ClickHouseError as exc:
        fail(f"the store failed: {one_line(exc)}")


@contextmanager
def api(creates: bool = False) -> Iterator["ApiClient"]:
    """The API: a running server that owns this store (service.client.open_client finds it), else the app
    in this process. A refusal is one line on stderr and exit 2; a store that cannot be opened too. A
    command that does not store anything (`creates` False) never creates a store: where none exists it
    says so and exits 1."""
    from service.client import ApiError, NoStore, open_client
    from service.terminal import quiet_library_logs

    quiet_library_logs()
    with store_errors():
        try:
            client = open_client(get_settings(), _given_url, existing=not creates)
        except ApiError as exc:
            fail(str(exc))
        except NoStore as exc:
            not_found(str(exc))
    try:
        yield client
    except ApiError as exc:
        fail(str(exc))
    finally:
        client.close()


def read_input(file: Path) -> bytes:
    try:
        return sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}")


LARGEST_PAGE = 1000  # the API's largest page of runs: --all reads in pages of this size


@dataclass(frozen=True)
class Page:
    """Which part of a listing to print: `limit` rows from `cursor` (None: the first), or every row."""

    limit: int
    cursor: str | None
    every: bool


def pages(
    client: "ApiClient", path: str, key: str, params: dict[str, str], page: Page
) -> tuple[list[dict[str, Any]], str | None]:
    """The rows of a cursor-paged listing (GET `path`, rows under `key`) and the cursor of what is left
    (None: nothing is)."""
    rows: list[dict[str, Any]] = []
    cursor = page.cursor
    while True:
        limit = LARGEST_PAGE if page.every else page.limit
        answer = client.json("GET", path, params={**params, "limit": limit} | ({"cursor": cursor} if cursor else {}))
        rows += answer[key]
        cursor = answer["next_cursor"]
        if not (page.every and cursor):
            return rows, cursor


def more_hint(cursor: str | None, limit: int, noun: str) -> None:
    """On stderr, so that a pipe or --json reads the rows alone."""
    if cursor:
        err.print(
            f"more {noun}: the next {limit} with --cursor {cursor} (and the same filters), or every one with --all",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def fmt(value: float | None, digits: int = 1) -> str:
    return MISSING if value is None else f"{value:.{digits}f}"


def day_of(text: str | None, option: str) -> date:
    try:
        return date.fromisoformat(text) if text else datetime.now(UTC).date()
    except ValueError:
        fail(f"{option} must be YYYY-MM-DD, got {text!r}")


def when(timestamp: str | None) -> str:
    return f"{timestamp[:16].replace('T', ' ')} UTC" if timestamp else MISSING

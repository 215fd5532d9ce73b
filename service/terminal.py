"""How the CLI prints. Listings are a Rich table on a terminal, where long cells fold onto more lines
and are never cut (`--wide` keeps each row on one line), and plain TSV with a header line when stdout
is a pipe or a file, so `repute runs | cut -f1` sees whole ids; a text cell that a spreadsheet would run
as a formula is written as text. `--json` is the machine-stable form.

Library logs (an in-process API's unexpected error, the engine's) are one line on stderr here, never a
traceback: the command itself says what failed.
"""

import logging
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import orjson
from rich import box
from rich.console import Console
from rich.table import Table

MISSING = "—"
Cell = str | int | float | None
WIDE = 100_000  # columns: wide enough that no table folds


def is_terminal(console: Console) -> bool:
    isatty = getattr(console.file, "isatty", None)
    return bool(isatty and isatty())


def print_table(
    console: Console,
    columns: Sequence[str],
    rows: Iterable[Sequence[Cell]],
    wide: bool = False,
    ids: Sequence[str] = (),
) -> None:
    """`columns` are snake_case names: the TSV header as they are, the table's headings with spaces. The
    `ids` columns keep their values on one line while the terminal has room; the others fold first."""
    if not is_terminal(console):
        _write_tsv(console, columns, rows)
        return
    texts = [[MISSING if cell is None else str(cell) for cell in row] for row in rows]
    table = Table(box=box.SIMPLE_HEAD)
    for index, name in enumerate(columns):
        longest = max((len(row[index]) for row in texts), default=0) if name in ids else None
        table.add_column(name.replace("_", " "), overflow="fold", min_width=longest)
    for row in texts:
        table.add_row(*row)
    if wide:  # as wide as the rows need: the terminal, not Rich, wraps what does not fit
        console = Console(file=console.file, width=WIDE)
    console.print(table)


def _write_tsv(console: Console, columns: Sequence[str], rows: Iterable[Sequence[Cell]]) -> None:
    lines = [columns, *([_tsv_cell(cell) for cell in row] for row in rows)]
    console.file.write("".join("\t".join(line) + "\n" for line in lines))


# What a spreadsheet opening the TSV would run as a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _tsv_cell(cell: Cell) -> str:
    """A cell on one line with no tab in it; a missing value is empty. A text that starts like a formula
    gets a leading `'`, which a spreadsheet shows as text; numbers stay numbers (-3.5 is no formula)."""
    if cell is None:
        return ""
    text = " ".join(str(cell).split())
    formula = isinstance(cell, str) and (cell.startswith(FORMULA_STARTS) or text.startswith(FORMULA_STARTS))
    return f"'{text}" if formula else text


def print_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2, default=str).decode())
    sys.stdout.write("\n")


class _OneLineOnStderr(logging.Handler):
    """A record's level and message, its first line only, on the stderr of the moment."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(f"{record.levelname.lower()}: {record.getMessage()}".splitlines()[0] + "\n")


def quiet_library_logs() -> None:
    """Warnings and errors of the service's and the ClickHouse driver's loggers as one line on stderr.
    Records still propagate: where the root logger has no handler (the CLI), this one line is all."""
    for name in ("repute", "clickhouse_connect"):
        logger = logging.getLogger(name)
        if not any(isinstance(handler, _OneLineOnStderr) for handler in logger.handlers):
            logger.addHandler(_OneLineOnStderr(logging.WARNING))

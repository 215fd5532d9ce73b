"""How the CLI prints. Listings are a Rich table on a terminal, where long cells wrap between words onto
more lines and are never cut (`--wide` keeps each row on one line), and plain TSV with a header line when stdout
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
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
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
    """`columns` are snake_case names: the TSV header as they are, the table's headings with spaces. On a
    terminal a value of the `ids` columns is shown as it is and the other values read as words (their
    underscores as spaces: `review recommended`), and cells wrap between words: no column is narrower
    than its longest word (an id: its whole value) while the terminal has room for that; where it has
    not, words fold, first outside the ids, then everywhere. `wide` keeps each row on one line."""
    if not is_terminal(console):
        _write_tsv(console, columns, rows)
        return
    headings = [name.replace("_", " ") for name in columns]
    texts = [[_shown(cell, name in ids) for cell, name in zip(row, columns, strict=True)] for row in rows]
    if wide:  # as wide as the rows need: the terminal, not Rich, wraps what does not fit
        console.print(_table(headings, texts, [None] * len(columns)), width=WIDE)
        return
    cells = list(zip(headings, *texts, strict=True))  # per column: its heading and its cells
    natural = [max(map(_longest_line, column)) for column in cells]
    words = [max(map(_longest_word, column)) for column in cells]
    id_columns = {i for i, name in enumerate(columns) if name in ids}
    every = set(range(len(columns)))
    room = console.width - _padding(len(columns))
    # What keeps its words whole, in order of preference: everything; the words outside the ids (a long id
    # folds); the ids; nothing. A column that folds keeps a few cells.
    for kept in (every, every - id_columns, id_columns, set()):
        least = [words[i] if i in kept else min(natural[i], FOLDED_CELLS) for i in every]
        if sum(least) <= room:
            break
    console.print(_table(headings, texts, _shared_out(natural, least, room)))


FOLDED_CELLS = 4


def _longest_line(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=0)


def _padding(columns: int) -> int:
    """The cells a table of this many columns takes besides its cells' text (edges, padding)."""
    wide = Console(width=WIDE)
    return Measurement.get(wide, wide.options, _table([""] * columns, [], [1] * columns)).minimum - columns


def _shared_out(natural: list[int], least: list[int], room: int) -> list[int]:
    """Each column its natural width if all fit; else at least `least`, and the room left shared out
    evenly, the columns that lack the least served first (so a short id stays whole beside a long one)."""
    if sum(natural) <= room:
        return natural
    widths = list(least)
    spare = max(0, room - sum(least))
    lacking = sorted(range(len(widths)), key=lambda i: natural[i] - least[i])
    for served, i in enumerate(lacking):
        given = min(natural[i] - least[i], spare // (len(lacking) - served))
        widths[i] += given
        spare -= given
    return widths


def _shown(cell: Cell, is_id: bool) -> str:
    if cell is None:
        return MISSING
    return str(cell) if is_id or not isinstance(cell, str) else cell.replace("_", " ")


def _table(headings: Sequence[str], texts: list[list[str]], widths: Sequence[int | None]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for heading, width in zip(headings, widths, strict=True):
        table.add_column(heading, overflow="fold", width=width)
    for row in texts:
        table.add_row(*row)
    return table


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

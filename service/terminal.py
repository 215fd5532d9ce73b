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
    drop: Sequence[str] = (),
) -> None:
    """`columns` are snake_case names: the TSV header as they are, the table's headings with spaces. On a
    terminal a value of the `ids` columns is shown as it is and the other values read as words (their
    underscores as spaces: `review recommended`), and cells wrap between words: no column is narrower
    than its longest word, an id is never cut. Where the terminal is too narrow for that, columns are left
    out (those named in `drop` first, in that order, then the others from the right; never an id) and a
    line on stderr says which; only when the ids alone do not fit (or a table without ids does not) do
    words fold. `wide` keeps each row on
    one line, every column shown."""
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
    kept = _kept(console.width, words, _leaving_order(columns, ids, drop) if ids else [])
    fits = _fits(kept, words, console.width)
    room = console.width - _padding(len(kept))
    least = [words[i] if fits else min(natural[i], FOLDED_CELLS) for i in kept]
    shown = [[row[i] for i in kept] for row in texts]
    console.print(_table([headings[i] for i in kept], shown, _shared_out([natural[i] for i in kept], least, room)))
    if len(kept) < len(columns):
        left_out = ", ".join(heading for i, heading in enumerate(headings) if i not in kept)
        sys.stderr.write(f"not shown at {console.width} columns: {left_out} (--wide or a wider terminal shows them)\n")


def _leaving_order(columns: Sequence[str], ids: Sequence[str], drop: Sequence[str]) -> list[int]:
    """The columns a narrow terminal leaves out, first to last: those named in `drop`, then the others
    from the right; never an id."""
    named = [columns.index(name) for name in drop if name in columns and name not in ids]
    return named + [i for i in reversed(range(len(columns))) if i not in named and columns[i] not in ids]


def _kept(width: int, words: list[int], leaving: list[int]) -> list[int]:
    """The columns shown: every one while their longest words fit, else fewer, in the order of `leaving`;
    every one too when even the columns that never leave (the ids) do not fit: then words fold."""
    kept = list(range(len(words)))
    if not _fits([i for i in kept if i not in leaving], words, width):
        return kept
    for column in leaving:
        if _fits(kept, words, width):
            break
        kept.remove(column)
    return kept


def _fits(kept: list[int], words: list[int], width: int) -> bool:
    return sum(words[i] for i in kept) <= width - _padding(len(kept))


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

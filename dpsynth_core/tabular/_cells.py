"""What one cell is: the states a stripped cell can be in (missing, a number with a dot or a comma,
grouped digits, infinite, text), found by patterns, vectorised over a chunk of cells; the per-column
counts of the first pass (:class:`CellStats`); the conversion of number cells to float64."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["MISSING_TOKENS", "SPACE", "MISSING", "PLAIN", "DOT", "COMMA3", "COMMA", "GROUPED", "INF", "TEXT",
           "NUMBER_LIKE", "STATE_HINTS", "cell_state", "classify", "CellStats", "earliest", "convert"]

#: Cells read as a missing value (compared case-insensitively, after stripping spaces).
MISSING_TOKENS = ("", "na", "n/a", "#n/a", "nan", "null", "none")
#: Characters stripped from both ends of every cell and header name (spaces, tabs, no-break spaces, a stray BOM).
SPACE = " \t\r\n\v\f\u00a0\u2007\u202f\u3000\ufeff"
_INF_TOKENS = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity")
# Cell states. The patterns run on stripped cells, in this order, each on what the previous left.
# They use only [0-9] (no Unicode digits) and syntax common to Python's re and RE2 (pyarrow).
MISSING, PLAIN, DOT, COMMA3, COMMA, GROUPED, INF, TEXT = range(8)
_EXP = "(?:[eE][+-]?[0-9]+)?"
_PATTERNS = (
    (PLAIN, "[+-]?[0-9]+" + _EXP),
    (DOT, r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+)" + _EXP),
    (COMMA3, "[+-]?[1-9][0-9]?[0-9]?,[0-9][0-9][0-9]"),  # 1,000: decimal comma or thousands?
    (COMMA, "[+-]?(?:[0-9]+,[0-9]*|,[0-9]+)" + _EXP),
    # digits in groups of three after separators: 1,000,000  1.000,5  1 000  1'000 (also NBSP)
    (GROUPED, "[+-]?[0-9][0-9]?[0-9]?(?:[,.' \u00a0\u202f][0-9][0-9][0-9])+(?:[.,][0-9]+)?"),
)
NUMBER_LIKE = (PLAIN, DOT, COMMA3, COMMA, GROUPED, INF)
_COMPILED = [(code, re.compile(pat)) for code, pat in _PATTERNS]


def cell_state(cell: str) -> int:
    """State of one stripped cell (the scalar twin of :func:`classify`, for header cells)."""
    low = cell.lower()
    if low in MISSING_TOKENS:
        return MISSING
    if low in _INF_TOKENS:
        return INF
    for code, pat in _COMPILED:
        if pat.fullmatch(cell):
            return code
    return TEXT


def _text_hint(cell: str) -> str:
    """What a non-number cell looks like, in generic words (never the value itself)."""
    low = cell.lower()
    if cell.startswith("#"):
        return "a spreadsheet error or code (#...), not a number"
    if low in ("true", "false", "yes", "no"):
        return "a yes/no value, not a number"
    if any(ch.isalpha() for ch in cell):
        return "letters in a number (a letter O for a zero? a unit?)"
    if not any(ch.isdigit() for ch in cell):
        return "a symbol, not a number (for a missing value, leave the cell empty)"
    if any(ch in cell for ch in "\u2212\u2013\u2014"):
        return "a typographic minus or dash instead of '-'"
    if any(ch in cell for ch in "%$€£¥"):
        return "a percent or currency sign in a number"
    if any(ch.isspace() for ch in cell):
        return "spaces inside a number"
    return "not a plain number (several signs, dots or commas?)"


STATE_HINTS = {
    GROUPED: "digits grouped by separators (thousands separators? in a spreadsheet, format the cells "
              "as plain numbers before saving)",
    COMMA: "a comma inside a number (a thousands separator or a decimal comma?)",
    COMMA3: "a comma inside a number (a thousands separator or a decimal comma?)",
}


def _strings(cells: Sequence[str] | pd.Series) -> pd.Series:
    """The cells stripped, as pandas' str (a Series keeps its dtype, Arrow's where pandas has it)."""
    return pd.Series(cells, dtype="str").str.strip(SPACE)


def classify(cells: Sequence[str] | pd.Series) -> np.ndarray:
    """The state (``MISSING`` ... ``TEXT``) of every cell, vectorised."""
    s = _strings(cells)
    low = s.str.lower()
    state = np.full(len(s), TEXT, dtype=np.uint8)
    state[low.isin(MISSING_TOKENS).to_numpy(dtype=bool)] = MISSING
    state[low.isin(_INF_TOKENS).to_numpy(dtype=bool)] = INF
    idx = np.flatnonzero(state == TEXT)
    for code, pattern in _PATTERNS:
        if idx.size == 0:
            break
        hit = s.iloc[idx].str.fullmatch(pattern).to_numpy(dtype=bool)
        state[idx[hit]] = code
        idx = idx[~hit]
    return state


class CellStats:
    """Per column and per state: the number of cells and the first data-row index (or -1)."""

    def __init__(self, width: int) -> None:
        self.count = np.zeros((TEXT + 1, width), dtype=np.int64)
        self.first = np.full((TEXT + 1, width), -1, dtype=np.int64)
        self.text_hint: dict[int, str] = {}

    def add(self, columns: Mapping[int, pd.Series], row0: int) -> None:
        """Count the states of a chunk of rows starting at data row ``row0``: ``columns`` maps a column's
        position to its cells (str)."""
        for j, column in columns.items():
            st = classify(column)
            cnt = np.bincount(st, minlength=TEXT + 1)
            self.count[:, j] += cnt
            for code in np.flatnonzero((cnt > 0) & (self.first[:, j] < 0)).tolist():
                first = int(np.argmax(st == code))
                self.first[code, j] = row0 + first
                if code == TEXT:
                    self.text_hint[j] = _text_hint(str(column.iloc[first]).strip(SPACE))

    def first_of(self, codes: Sequence[int], j: int) -> tuple[int, int]:
        """(first data-row index, state) among ``codes`` in column ``j``; index -1 when none."""
        best = (-1, -1)
        for code in codes:
            r = int(self.first[code, j])
            if r >= 0 and (best[0] < 0 or r < best[0]):
                best = (r, code)
        return best


def earliest(stats: CellStats, codes: Sequence[int], cols: Sequence[int]) -> tuple[int, int, int]:
    """(data-row index, column index, state) of the first cell in ``codes`` among ``cols`` (row-major)."""
    best = (-1, -1, -1)
    for j in cols:
        r, code = stats.first_of(codes, j)
        if r >= 0 and (best[0] < 0 or r < best[0]):
            best = (r, j, code)
    return best


def _to_float(numbers) -> np.ndarray:
    """float64 of a string Series of valid numbers (dot decimal): Arrow's cast when the strings are
    Arrow-backed (fast, correctly rounded), else pandas (Python's float)."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc

        return pc.cast(pa.array(numbers), pa.float64()).to_numpy(zero_copy_only=False)
    except Exception:  # no pyarrow, or a storage it does not take: the exact, slower path
        return numbers.astype("float64").to_numpy(dtype=np.float64)


def convert(cells: Sequence[str] | pd.Series, decimal: str) -> np.ndarray:
    """float64 values of cells known to be numbers, missing (NaN) or infinite."""
    s = _strings(cells)
    low = s.str.lower()
    out = np.full(len(s), np.nan)
    inf = low.isin(_INF_TOKENS).to_numpy(dtype=bool)
    out[inf] = np.where(low[inf].str.startswith("-").to_numpy(dtype=bool), -np.inf, np.inf)
    num = ~(inf | low.isin(MISSING_TOKENS).to_numpy(dtype=bool))
    if num.any():
        sub = s[num]
        if decimal == ",":
            sub = sub.str.replace(",", ".", regex=False)
        out[num] = _to_float(sub)
    return out

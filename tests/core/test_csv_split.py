"""The two splitters of the CSV reader (dpsynth_core/tabular/_split.py) give the same table: pandas' C parser on
plain files, Python's csv module on every file. Each generated file is read twice, once as it comes (the C parser
where the file is plain) and once with the plain check switched off (the csv module), and everything read_table
returns or raises must be equal: the frame bit for bit, the notes, the error's message, kind, row and column.
The files mix numbers, words, missing-value tokens, spaces of every kind, blank and short lines, and lines with
too many cells, so that both the plain files and the ones that are not are drawn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpsynth_core.tabular import CSVError, _split, read, read_preview, read_table

CELLS = st.one_of(
    st.sampled_from(["1", "-2.5", " 3 ", "4e2", ".5", "inf", "NA", "", "nan", "x", "F", "M", "1,5", "1 000",
                     "\u00a07\u00a0", "\t", " ", "\u2028", "\x1c", "\ufeff1", "#N/A", "None", "0x10"]),
    st.text(alphabet="0123456789.-+eE abF\t\u00a0\u3000", max_size=6),
)


@st.composite
def csv_text(draw) -> tuple[str, str]:
    delimiter = draw(st.sampled_from([",", ";", "\t", "|"]))
    width = draw(st.integers(1, 4))
    header = [f"c{j}" for j in range(width)]
    lines = [delimiter.join(header)]
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["row"] * 8 + ["blank", "short", "long", "spaces"]))
        if kind == "row":
            lines.append(delimiter.join(draw(st.lists(CELLS, min_size=width, max_size=width))))
        elif kind == "blank":
            lines.append("")
        elif kind == "spaces":
            lines.append(delimiter.join([" "] * width))
        else:
            k = max(width - 1, 0) if kind == "short" else width + 1
            lines.append(delimiter.join(draw(st.lists(CELLS, min_size=k, max_size=k))))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    tail = draw(st.sampled_from(["", end, end + end]))
    return end.join(lines) + tail, width


def _outcome(read, data: bytes, **kwargs):
    try:
        t = read(data, **kwargs)
    except CSVError as exc:
        return ("error", str(exc), exc.kind, exc.row, exc.column)
    frame = t.frame
    cells = [(c, str(frame[c].dtype), frame[c].astype(object).tolist() if isinstance(frame[c].dtype, pd.CategoricalDtype)
              else frame[c].to_numpy().view(np.int64).tolist()) for c in frame.columns]
    preview = None if t.preview is None else t.preview.astype(object).where(t.preview.notna(), None).values.tolist()
    return ("table", cells, list(t.notes), t.text_columns, t.empty_columns, t.dropped_rows, t.bad_rows, t.bad_cells,
            t.dialect, preview)


def _both(data: bytes, read=read_table, **kwargs):
    """(read as it comes, read by the csv module alone)."""
    fast = _outcome(read, data, **kwargs)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(read_module, "plain_body", lambda *a, **k: None)
        slow = _outcome(read, data, **kwargs)
    return fast, slow


read_module = read


@given(csv_text(), st.sampled_from(["error", "drop"]), st.booleans(), st.booleans())
def test_both_splitters_read_every_generated_file_alike(drawn, missing, drop_bad, preview):
    text, _ = drawn
    fast, slow = _both(text.encode("utf-8"), read_preview if preview else read_table, missing=missing,
                       drop_bad_rows=drop_bad)
    assert fast == slow


@given(csv_text(), st.booleans())
def test_both_splitters_match_declared_categories_alike(drawn, drop_bad):
    text, width = drawn
    fast, slow = _both(text.encode("utf-8"), categories={f"c{width - 1}": ["F", "M", "1"]}, missing="drop",
                       drop_bad_rows=drop_bad)
    assert fast == slow


@pytest.mark.parametrize("text, plain", [
    ("a,b\n1,2\n3,4\n", True),
    ("a,b\r\n1,2\r\n3,4\r\n\r\n", True),                # blank lines at the end are dropped by both
    ('a,b\n"1",2\n', False),                             # a quote: the csv module
    ("a,b\n1,2\r3,4\n", False),                          # a lone carriage return
    ("a,b\n1,2\n\n3,4\n", False),                        # a blank line inside: a row of missing values
    ("a,b\n1,2\n3\n4,5,6\n", False),                     # one short line and one long: the counts agree
    ("a,b\n1,2\n , \n", False),                          # a blank last line (dropped by the csv module)
    ("a,b\n1,\u2028\n", False),                          # a space the cells are not stripped of
    ("a,b\n\ufeff1,2\n", False),                         # a mark the C parser would drop
])
def test_what_makes_a_file_plain(text, plain):
    assert (_split.plain_body(text, ",", 2, 100) is not None) == plain


def test_a_long_line_beside_a_short_one_goes_to_the_csv_module_and_its_message():
    """The separators add up (one line short, one long; pandas' C parser would pad the short one and, reading
    some columns only, cut the long one): the csv module reads it and names the short row, as before."""
    data = b"a,b,c\n1,2,3\n4,5\n6,7,8,9\n"
    assert _split.plain_body(data.decode(), ",", 3, 100) is None
    fast, slow = _both(data)
    assert fast == slow and fast[0] == "error" and fast[2] == "structure" and fast[3] == 3
    assert "row 3 has 2 cells but the header has 3" in fast[1]


def test_too_many_rows_are_refused_by_the_csv_module_as_before():
    data = ("x\n" + "1\n" * 11).encode()
    assert _split.plain_body(data.decode(), ",", 1, 10) is None
    fast, slow = _both(data, max_rows=10)
    assert fast == slow and fast[2] == "too_many_rows" and fast[3] == 12
    assert _split.plain_body(data.decode(), ",", 1, 11) is not None

"""Tests of dpsynth_core.tabular: read_table (one test per rule, each checking the message's content),
load_csv and csv_bytes."""

import builtins
import io
import pickle
import re
import tempfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpsynth_core.tabular import MISSING_TOKENS, CSVError, Table, csv_bytes, load_csv, read_table


def refused(data, kind, *, row=None, column=None, **kwargs) -> str:
    """The message of the CSVError ``read_table(data, **kwargs)`` raises, after checking its fields."""
    with pytest.raises(CSVError) as info:
        read_table(data, **kwargs)
    err = info.value
    assert err.kind == kind, str(err)
    assert err.row == row and err.column == column, (err.row, err.column, str(err))
    msg = str(err)
    assert "\n" not in msg and msg.endswith(".")
    return msg


def values(table: Table) -> dict:
    return table.frame.to_dict("list")


# ------------------------------------------------------------------------------- separators
def test_semicolons_with_decimal_commas_are_read_as_numbers():
    t = read_table(b"x;y\n1,5;2,25\n-3,75;4\n0,001;1,5e3\n")
    assert values(t) == {"x": [1.5, -3.75, 0.001], "y": [2.25, 4.0, 1500.0]}
    assert t.dialect == {"delimiter": ";", "decimal": ",", "thousands": None, "encoding": "utf-8"}
    assert "Cells are separated by semicolons." in t.notes
    assert "Numbers use a comma as decimal mark (1,5 is read as 1.5)." in t.notes
    assert (t.frame.dtypes == np.float64).all() and t.numeric == ("x", "y")


def test_semicolons_with_decimal_points_and_integers():
    assert values(read_table(b"x;y\n1.5;2\n3;4\n")) == {"x": [1.5, 3.0], "y": [2.0, 4.0]}
    t = read_table(b"x;y\n1;2\n3;4\n")  # no decimal mark at all
    assert t.dialect["decimal"] == "." and values(t) == {"x": [1.0, 3.0], "y": [2.0, 4.0]}


def test_tab_separated():
    t = read_table(b"a\tb\tname\n1.5\t2\tAnn, Smith\n3\t4\tBob\n")
    assert values(t) == {"a": [1.5, 3.0], "b": [2.0, 4.0]}
    assert t.dialect["delimiter"] == "\t" and "Cells are separated by tabs." in t.notes
    assert t.text_columns == ("name",)


def test_tab_separated_with_decimal_commas():
    t = read_table(b"a\tb\n1,5\t2,5\n")
    assert values(t) == {"a": [1.5], "b": [2.5]} and t.dialect["decimal"] == ","


def test_pipe_separated():
    t = read_table(b"a|b\n1|2\n3|4\n")
    assert values(t) == {"a": [1.0, 3.0], "b": [2.0, 4.0]}
    assert t.dialect["delimiter"] == "|" and "Cells are separated by vertical bars (|)." in t.notes


def test_excel_sep_line_chooses_the_separator_and_is_not_a_row():
    t = read_table(b"sep=;\nx;y\n1,5;2\n")
    assert values(t) == {"x": [1.5], "y": [2.0]}
    assert "first line 'sep=' says" in t.notes[0]
    msg = refused(b"sep=;\nx;y\n1;\n2;3\n", "missing", row=2, column="y")  # row 2: the sep line is not counted
    assert "the first at row 2, column 'y'" in msg
    assert "only commas, semicolons, tabs and vertical bars" in refused(b"sep=#\nx#y\n1#2\n", "structure", row=1)


def test_ambiguous_separator_is_refused():
    # every line splits into 2 cells at ';' and into 2 cells at ','
    msg = refused(b"a,b;c\n1,2;3\n", "structure")
    assert "could be split into columns at commas (2 columns) or at semicolons (2 columns)" in msg
    assert "save it as comma-separated with a dot as decimal mark" in msg


def test_single_column_with_decimal_commas_is_refused_not_misread():
    msg = refused(b"x\n1,5\n2,5\n", "structure", row=2)
    assert "row 2 has 2 cells but the header has 1 (cells are separated by commas)" in msg
    assert "write numbers with a dot as decimal mark" in msg


def test_ragged_rows_are_refused_with_the_row():
    msg = refused(b"a,b\n1,2\n3\n4,5,6,7\n", "structure", row=3)
    assert "not a regular table: row 3 has 1 cell but the header has 2" in msg
    assert "row 3" in refused(b"a;b\n1;2\n1;2;3\n", "structure", row=3)


@pytest.mark.parametrize("data,row,words", [
    (b'a,b\n1,2\n3,"x\n', 3, 'a quote (") opened in row 3 is never closed'),
    (b'a,b\n1,"x"y\n', 2, "row 2 has a quoted cell followed by other characters"),
    (b"a,b\n1,2\n3,4\r5\n", 3, "row 3 has a line break inside a cell that is not quoted"),
])
def test_broken_quotes_are_refused_with_the_row(data, row, words):
    assert words in refused(data, "structure", row=row)


# -------------------------------------------------------------------------- bad number cells
def test_letter_o_for_zero_is_an_error_with_row_and_column():
    msg = refused(b"income,age\n1,20\n0.5,30\nO.01,40\n", "not_a_number", row=4, column="income")
    assert "a cell that is not a number at row 4, column 'income': letters in a number" in msg
    assert "write plain numbers such as 1000 or 1.5" in msg
    assert "O.01" not in msg


def test_quoted_thousands_in_a_comma_file_is_an_error_with_the_hint():
    msg = refused(b'income,age\n1,2\n"1,000",3\n', "not_a_number", row=3, column="income")
    assert "a comma inside a number (a thousands separator or a decimal comma?)" in msg
    assert "1,000" not in msg.split("such as")[0]


@pytest.mark.parametrize("cell", [b"1,000,000", b"1.000,5", b"1 000", b"1'000"])
def test_grouped_digits_are_never_guessed(cell):
    msg = refused(b"x;y\n1;2\n" + cell + b";3\n", "not_a_number", row=3, column="x")
    assert "digits grouped by separators (thousands separators?" in msg


def test_comma_thousands_or_decimal_is_refused_when_nothing_proves_the_decimal_comma():
    msg = refused(b"x;y\n1,000;2\n12,500;3\n", "decimal", row=2, column="x")
    assert "numbers such as 1,000 (first at row 2, column 'x')" in msg
    assert "could be a decimal mark or a thousands separator" in msg
    # one cell that can only be a decimal comma settles it: 1,000 is then 1.0
    assert values(read_table(b"x;y\n1,000;2\n1,25;3\n")) == {"x": [1.0, 1.25], "y": [2.0, 3.0]}


def test_mixed_decimal_marks_are_refused():
    msg = refused(b"x;y\n1,5;2\n3;2.5\n", "decimal", row=2, column="x")
    assert ("mixes decimal marks: row 2, column 'x' has a number with a comma and row 3, column 'y' one "
            "with a dot") in msg


@pytest.mark.parametrize("cell,hint", [
    (b"#DIV/0!", "a spreadsheet error or code"),
    (b"?", "a symbol, not a number (for a missing value, leave the cell empty)"),
    (b"5%", "a percent or currency sign"),
    (b"1.2.3", "not a plain number"),
    (b"1_000", "not a plain number"),
    ("\u22125".encode(), "a typographic minus"),
    (b"TRUE", "a yes/no value"),
])
def test_bad_cell_hints_describe_without_echoing(cell, hint):
    msg = refused(b"v,w\n1,1\n2,2\n" + cell + b",3\n", "not_a_number", row=4, column="v")
    assert hint in msg and cell.decode() not in msg


# -------------------------------------------------------------------- numeric or text column
def test_text_columns_are_left_out_and_named():
    t = read_table(b'name,x,city,y\nann,1,rome,2\nbob,3,"New York, NY",4\n')
    assert values(t) == {"x": [1.0, 3.0], "y": [2.0, 4.0]}
    assert t.text_columns == ("name", "city")
    assert "Left out 2 columns holding text: 'name', 'city'." in t.notes


def test_threshold_half_numbers_is_numeric_with_a_bad_cell():
    # 2 numbers out of 4 non-empty cells: numeric, so the first word is an error
    msg = refused(b"code,x\n12,1\nab,2\n34,3\ncd,4\n", "not_a_number", row=3, column="code")
    assert "letters in a number" in msg


def test_threshold_below_half_numbers_is_text():
    # 1 number out of 3 non-empty cells: a text column, left out
    t = read_table(b"code,x\n12,1\nab,2\ncd,3\n")
    assert t.text_columns == ("code",) and t.numeric == ("x",)


def test_booleans_are_text():
    t = read_table(b"a,flag\n1,True\n2,False\n")
    assert t.text_columns == ("flag",) and t.numeric == ("a",)


def test_empty_columns_are_left_out_and_named():
    t = read_table(b"a,b,c\n1,,NA\n2,,\n")
    assert t.numeric == ("a",) and t.empty_columns == ("b", "c")
    assert "Left out 2 empty columns: 'b', 'c'." in t.notes


def test_no_numeric_column():
    msg = refused(b"name,city\nann,rome\n", "no_numeric_column")
    assert "has no numeric column: its 2 columns hold text or are empty" in msg
    assert "single column" in refused(b"a b\n1 2\n", "no_numeric_column")


def test_columns_select_and_order():
    t = read_table(b"a,b,name,c\n1,2,x,3\n", columns=["c", "a"])
    assert list(t.frame.columns) == ["c", "a"] and values(t) == {"c": [3.0], "a": [1.0]}
    assert t.text_columns == () and t.numeric == ("c", "a")
    assert "its columns are 'a', 'b', 'name', 'c'" in refused(b"a,b,name,c\n1,2,x,3\n", "no_such_column",
                                                              column="zz", columns=["a", "zz"])
    msg = refused(b"a,name\n1,x\n", "text_column", row=2, column="name", columns=["name"])
    assert "column 'name' holds text, not numbers (the first text is at row 2)" in msg
    assert "column 'e' is empty" in refused(b"a,e\n1,\n", "empty_column", column="e", columns=["e"])


def test_unrequested_columns_are_not_checked():
    t = read_table(b"a,b\n1,O.5\n2,\n", columns=["a"])
    assert values(t) == {"a": [1.0, 2.0]}


def test_whitespace_around_cells_and_headers_is_stripped():
    t = read_table(b" a , b \n 1 ,\t2.5 \n")
    assert values(t) == {"a": [1.0], "b": [2.5]}
    t = read_table("a;b\n\u00a01,5\u00a0;\u202f2\n".encode())  # no-break spaces, as some spreadsheets write
    assert values(t) == {"a": [1.5], "b": [2.0]}
    assert "spaces inside a number" in refused(b"a,b\n1,2\n3 4 5,6\n", "not_a_number", row=3, column="a")


# --------------------------------------------------------------------------------- the header
def test_duplicate_header_is_refused_with_both_positions():
    msg = refused(b"x,y,x\n1,2,3\n", "header", row=1, column="x")
    assert "names two columns 'x' in the header (row 1), column 1 (A) and column 3 (C)" in msg
    assert "give each column a different name" in msg
    refused(b"x, x\n1,2\n", "header", row=1, column="x")  # equal once stripped


def test_empty_header_cell_is_refused_with_its_position():
    msg = refused(b"x,,y\n1,2,3\n", "header", row=1)
    assert "an empty column name in the header (row 1), column 2 (B): give every column a name" in msg
    assert "row 1 must be the header" in refused(b"\nx,y\n1,2\n", "header", row=1)


def test_header_of_numbers_is_refused():
    assert "numbers in its first line instead of column names: add a header row" in refused(
        b"1,2.5\n3,4\n", "header", row=1)
    refused(b"0\n1\n2\n", "header", row=1)  # a single column without header
    refused(b"1,5;2,5\n3;4\n", "header", row=1)  # decimal commas
    assert read_table(b"2019,2020,region\n1,2,x\n").numeric == ("2019", "2020")  # some numbers are fine


def test_columns_beyond_the_spreadsheet_alphabet_are_named():
    header = ",".join(f"c{j}" for j in range(30)) + ",c0"
    assert "column 1 (A) and column 31 (AE)" in refused((header + "\n" + "1," * 30 + "1\n").encode(), "header",
                                                        row=1, column="c0")


# ---------------------------------------------------------------------------- missing values
def test_missing_values_are_an_error_with_location_and_count():
    msg = refused(b"a,b,name\n1,2,x\n3,,y\n,NA,\n5,6,\n", "missing", row=3, column="b")
    assert "missing values (an empty cell, NA or NaN) in 2 rows, the first at row 3, column 'b'" in msg
    assert "fill them in, or choose to drop the 2 rows with missing values" in msg
    with pytest.raises(CSVError) as info:
        read_table(b"a,b\n1,2\n3,\n,NA\n")
    assert info.value.count == 2


@pytest.mark.parametrize("token", [t for t in MISSING_TOKENS if t] + ["NULL", "NaN", "n/A", "  "])
def test_missing_tokens(token):
    refused(b"a,b\n1,2\n3," + token.encode() + b"\n", "missing", row=3, column="b")


def test_missing_drop_drops_rows_counting_only_the_columns_read():
    t = read_table(b"a,b,name\n1,2,\n3,,y\n,NA,z\n5,6,w\n", missing="drop")
    assert values(t) == {"a": [1.0, 5.0], "b": [2.0, 6.0]}
    assert t.dropped_rows == 2 and t.dropped_row_numbers == (3, 4)
    assert "Dropped 2 rows with missing values (rows 3, 4)." in t.notes
    assert list(t.frame.index) == [0, 1]
    t = read_table(b"a,b\n1,\n2,3\n", missing="drop", columns=["a"])
    assert t.dropped_rows == 0 and values(t) == {"a": [1.0, 2.0]}


def test_missing_drop_lists_the_first_ten_rows():
    t = read_table(b"a,b\n" + b"1,\n" * 12 + b"2,3\n", missing="drop")
    assert t.dropped_rows == 12 and t.dropped_row_numbers == tuple(range(2, 12))
    assert "Dropped 12 rows with missing values (rows 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, ...)." in t.notes


def test_missing_drop_of_every_row_is_refused():
    msg = refused(b"a,b\n1,\n,2\n", "missing", row=2, column="b", missing="drop")
    assert "a missing value in every row (2 rows" in msg


def test_infinite_values_are_always_an_error():
    for data, row, col in [(b"a,b\n1,2\n3,inf\n", 3, "b"), (b"a,b\n-Infinity,2\n", 2, "a"),
                           (b"a,b\n1,1e400\n", 2, "b"), (b"a;b\n1;-1,5e999\n2,5;3\n", 2, "b")]:
        for mode in ("error", "drop"):
            msg = refused(data, "infinite", row=row, column=col, missing=mode)
            assert f"an infinite value at row {row}, column '{col}' (inf, or a number too large" in msg


# --------------------------------------------------------------------------------- encodings
def test_utf8_bom_is_accepted():
    t = read_table(b"\xef\xbb\xbfa,b\n1,2\n")
    assert t.numeric == ("a", "b") and t.dialect["encoding"] == "utf-8-sig"
    assert read_table("é,b\n1,2\n".encode()).numeric == ("é", "b")


def test_non_utf8_is_refused_with_the_line():
    msg = refused(b"a,b\n1,2\ncaf\xe9,1\n", "encoding", row=3)
    assert "is not UTF-8 text (the first unreadable character is on line 3): save it as 'CSV UTF-8'" in msg


def test_utf16_nul_and_zip_are_refused():
    assert "UTF-16 text, not UTF-8" in refused("a,b\n1,2\n".encode("utf-16"), "encoding")
    assert "contains NUL characters" in refused(b"a,b\n1,\x002\n", "binary")
    assert "ZIP archive (an Excel .xlsx workbook?)" in refused(b"PK\x03\x04rest", "binary")


# ---------------------------------------------------------------------------------- the limits
def test_byte_limit_on_a_path_is_checked_before_opening(tmp_path, monkeypatch):
    path = tmp_path / "big.csv"
    path.write_bytes(b"a\n" + b"1\n" * 100)

    def no_open(*args, **kwargs):
        raise AssertionError("the file was opened")

    monkeypatch.setattr(builtins, "open", no_open)
    msg = refused(path, "size", max_bytes=50)
    assert f"The file '{path}' is 202 bytes; at most 50 bytes can be read" in msg


def test_byte_limit_on_a_stream_reads_at_most_one_byte_more():
    class Stream:
        def __init__(self):
            self.asked = []

        def read(self, size=-1):
            if size < 0 or size > 51:
                raise AssertionError(f"read({size}) beyond max_bytes + 1")
            self.asked.append(size)
            return (b"a\n" + b"1\n" * 100)[:size]

    s = Stream()
    assert "is larger than 50 bytes; at most 50 bytes can be read" in refused(s, "size", max_bytes=50)
    assert s.asked == [51]


def test_byte_limit_on_an_upload_is_checked_before_copying():
    class Upload(io.BytesIO):  # like Streamlit's UploadedFile
        name = "people.csv"

        def getvalue(self):
            raise AssertionError("copied an oversized upload")

    assert "The file 'people.csv' is 202 bytes" in refused(Upload(b"a\n" + b"1\n" * 100), "size", max_bytes=50)


def test_row_limit_stops_reading():
    # the broken quote after the limit is never reached
    msg = refused(b'a,b\n1,2\n3,4\n5,6\n7,"\n', "too_many_rows", row=4, max_rows=2)
    assert "has more than 2 data rows; at most 2 can be read: use a sample of the rows" in msg
    assert read_table(b"a\n1\n2\n\n\n", max_rows=2).frame.shape == (2, 1)  # trailing blanks are not rows
    refused(b"a\n1\n\n2\n", "too_many_rows", row=4, max_rows=2)  # an interior blank line is a row


def test_column_limits():
    # the header is checked before any data row (the broken quote is never reached)
    msg = refused(b'a,b,c,d\n1,"\n', "too_many_columns", row=1, max_file_cols=3)
    assert "has 4 columns; at most 3 can be read: remove the columns you do not need" in msg
    msg = refused(b"a,b,c,t\n1,2,3,x\n", "too_many_columns", max_cols=2)
    assert "has 3 numeric columns; at most 2 can be read at once: choose the columns to use" in msg
    assert read_table(b"a,b,c,t\n1,2,3,x\n", max_cols=2, columns=["c", "a"]).numeric == ("c", "a")
    assert read_table(b"a,b\n1,2\n3,4\n", max_rows=2, max_cols=2, max_bytes=12).frame.shape == (2, 2)


# ---------------------------------------------------------------------------- shapes of files
def test_quoted_fields_with_commas_quotes_and_newlines_in_text_columns():
    t = read_table(b'name,x,note\n"Smith, J",1,"said ""hi""\nthen left"\n"Doe, A",2,ok\n')
    assert values(t) == {"x": [1.0, 2.0]} and t.text_columns == ("name", "note")


def test_crlf_and_cr_line_endings():
    assert values(read_table(b"a,b\r\n1,2\r\n3,4\r\n")) == {"a": [1.0, 3.0], "b": [2.0, 4.0]}
    assert values(read_table(b"a;b\r1,5;2\r3;4\r")) == {"a": [1.5, 3.0], "b": [2.0, 4.0]}


def test_blank_lines_at_the_end_are_ignored_inside_they_are_missing_rows():
    t = read_table(b"a,b\n1,2\n3,4\n\n  \n,\n\r\n")
    assert t.frame.shape == (2, 2) and t.dropped_rows == 0
    msg = refused(b"a,b\n1,2\n\n3,4\n", "missing", row=3, column="a")
    assert "in 1 row, the first at row 3" in msg


def test_a_single_row_without_final_newline():
    t = read_table(b"a,b\n1,2")
    assert values(t) == {"a": [1.0], "b": [2.0]} and "Read 1 row and 2 numeric columns: 'a', 'b'." in t.notes


def test_a_single_column():
    t = read_table(b"x\n1\n-2.5\n3e-3\n")
    assert values(t) == {"x": [1.0, -2.5, 0.003]} and t.dialect["delimiter"] == ","


def test_empty_and_header_only():
    msg = refused(b"", "empty")
    assert "is empty: it must be a non-empty CSV file with a header row (column names)" in msg
    refused(b" \r\n\n", "empty")
    assert "has a header row but no data: it needs at least one data row" in refused(b"a,b\n\n", "empty")


def test_number_syntax():
    t = read_table(b"v,w\n+3,.5\n5.,-0\n1E5,00012\n1e-400,-1.5e+2\n")
    assert values(t) == {"v": [3.0, 5.0, 1e5, 0.0], "w": [0.5, -0.0, 12.0, -150.0]}


# ------------------------------------------------------------------------------ sources, names
def test_sources_and_how_the_file_is_named(tmp_path):
    data = b"a,b\n1,2\n"
    path = tmp_path / "data.csv"
    path.write_bytes(data)
    consumed = io.BytesIO(data)
    consumed.read()  # getvalue() still returns everything

    class ReadOnly:
        def __init__(self):
            self._buf = io.BytesIO(data)

        def read(self, size=-1):
            return self._buf.read(size)

    with open(path, "rb") as fh:
        for src in (data, bytearray(data), memoryview(data), str(path), path, io.BytesIO(data), consumed,
                    ReadOnly(), fh):
            assert values(read_table(src)) == {"a": [1.0], "b": [2.0]}
        fh.seek(0)
        assert "The file 'data.csv' has a header row but no data" in refused(
            io.BufferedReader(io.BytesIO(b"a\n")), "empty", what="the file 'data.csv'")
    assert refused(b"a\n", "empty").startswith("The CSV data has")
    assert refused(str(path) + ".missing", "not_found").startswith(f"The file '{path}.missing' does not exist")
    assert refused(b"a\n", "empty", what="the uploaded file 'x.csv'").startswith("The uploaded file 'x.csv' has")


@pytest.mark.parametrize("source,kwargs,exc,match", [
    (123, {}, TypeError, "'source' parameter of read_table must be a path, bytes or a binary file-like object"),
    (io.StringIO("a\n1\n"), {}, TypeError, r"opened in binary mode \('rb'\)"),
    (b"a\n1\n", dict(columns="a"), TypeError, "'columns' parameter of read_table"),
    (b"a\n1\n", dict(columns=["a", "a"]), ValueError, "distinct"),
    (b"a\n1\n", dict(missing="skip"), ValueError, "'missing' parameter of read_table must be one of 'error', 'drop'"),
    (b"a\n1\n", dict(missing=None), TypeError, "'missing' parameter of read_table"),
    (b"a\n1\n", dict(max_rows=0), ValueError, "'max_rows' parameter of read_table"),
    (b"a\n1\n", dict(max_file_cols=0), ValueError, "'max_file_cols' parameter of read_table"),
    (b"a\n1\n", dict(what=""), TypeError, "'what' parameter of read_table"),
])
def test_argument_errors_are_type_and_value_errors(source, kwargs, exc, match):
    with pytest.raises(exc, match=match) as info:
        read_table(source, **kwargs)
    assert not isinstance(info.value, CSVError)


def test_csv_error_is_a_value_error_that_pickles():
    with pytest.raises(ValueError) as info:
        read_table(b"a,b\n1,2\n3,x\n4,5\n")
    err = info.value
    assert isinstance(err, CSVError) and (err.kind, err.row, err.column) == ("not_a_number", 3, "b")
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err) and (back.kind, back.row, back.column) == ("not_a_number", 3, "b")


SECRET = "SECRET4711"


@pytest.mark.parametrize("data", [
    f"a,b\n1,2\n3,{SECRET}\n5,6\n",
    f"a;b\n1;2\n3;{SECRET}x1,5\n",
    f"a,b\n1,2\n3\n{SECRET},1,2\n",
    f'a,b\n1,"{SECRET}"x\n',
    f"a,b,{SECRET}\n1,2,3\n",  # a header name is echoed: it names the column, it is not a value
])
def test_messages_never_echo_cell_values(data, monkeypatch):
    def no_files(*args, **kwargs):
        raise AssertionError("read_table touched the file system")

    monkeypatch.setattr(builtins, "open", no_files)
    try:
        table = read_table(data.encode(), columns=["a", "b"])
    except CSVError as err:
        msg = str(err)
        assert SECRET not in msg and re.search(r"row \d", msg), msg
    else:
        assert SECRET not in " ".join(table.notes)


# ------------------------------------------------------------------------------ round trips
_finite = st.floats(allow_nan=False, allow_infinity=False)
_COMMA3 = re.compile(r"[+-]?[1-9][0-9]?[0-9]?,[0-9]{3}")


@given(st.booleans(), st.integers(1, 6).flatmap(lambda n: st.integers(2, 4).flatmap(
    lambda d: st.lists(st.lists(_finite, min_size=d, max_size=d), min_size=n, max_size=n))))
def test_round_trip_is_exact_in_both_dialects(european, rows):
    """Shortest repr-exact text, written as 'a,b / 1.5,2' or as 'a;b / 1,5;2', reads back bit for bit."""
    X = np.array(rows, dtype=np.float64)
    names = [f"c{j}" for j in range(X.shape[1])]
    cells = [[repr(float(v)) for v in row] for row in X]
    sep = ","
    if european:
        cells, sep = [[c.replace(".", ",") for c in r] for r in cells], ";"
    text = sep.join(names) + "\n" + "\n".join(sep.join(r) for r in cells) + "\n"
    commas = [c for r in cells for c in r if "," in c]
    if commas and all(_COMMA3.fullmatch(c) for c in commas):  # only 1,000-like cells: ambiguous, refused
        with pytest.raises(CSVError) as info:
            read_table(text.encode())
        assert info.value.kind == "decimal"
        return
    t = read_table(text.encode())
    assert t.dialect["delimiter"] == sep and t.dialect["decimal"] == ("," if commas else ".")
    back = t.frame.to_numpy()
    assert back.dtype == np.float64 and back.view(np.int64).tolist() == X.view(np.int64).tolist()


def test_frame_is_a_plain_float_frame():
    t = read_table(b"a,b\n1,2\n")
    assert isinstance(t.frame, pd.DataFrame) and isinstance(t.frame.index, pd.RangeIndex)
    assert np.isfinite(t.frame.to_numpy()).all()


# ------------------------------------------------------------------------------ load_csv
GOOD = b"a,b,name,c\n1,2.5,x,7\n3,-4e-3,y,7\n5,6,z,7\n"


def test_load_csv_from_bytes_path_and_file_likes(tmp_path):
    expected = pd.DataFrame({"a": [1.0, 3.0, 5.0], "b": [2.5, -4e-3, 6.0], "c": [7.0, 7.0, 7.0]})
    path = tmp_path / "data.csv"
    path.write_bytes(GOOD)

    class ReadOnly:  # an object with read() only (no getvalue)
        def __init__(self, data):
            self._buf = io.BytesIO(data)

        def read(self, size=-1):
            return self._buf.read(size)

    consumed = io.BytesIO(GOOD)
    consumed.read()  # Streamlit's UploadedFile may already have been read: getvalue() still works
    with open(path, "rb") as fh:
        sources = [GOOD, bytearray(GOOD), memoryview(GOOD), str(path), path, io.BytesIO(GOOD), consumed,
                   ReadOnly(GOOD), fh]
        for src in sources:
            df = load_csv(src)
            pd.testing.assert_frame_equal(df, expected)
            assert (df.dtypes == np.float64).all()


def test_load_csv_header_selection_and_edge_cases():
    df = load_csv(GOOD, columns=["c", "a"])
    assert list(df.columns) == ["c", "a"] and df["a"].tolist() == [1.0, 3.0, 5.0]
    assert load_csv(b"\xef\xbb\xbfa,b\n1,2\n").columns.tolist() == ["a", "b"]  # UTF-8 with BOM
    one = load_csv(b"a,b\n1,2")  # a single row, no final newline
    assert one.shape == (1, 2)
    assert load_csv(b"a,flag\n1,True\n2,False\n").columns.tolist() == ["a"]  # booleans are not numbers
    assert load_csv(b"a,b\r\n1,2\r\n3,4\r\n\r\n\n").shape == (2, 2)  # CRLF and trailing blank lines
    assert load_csv(b"x\n0\n0\n")["x"].tolist() == [0.0, 0.0]  # a constant column is fine
    assert load_csv(b"a;b\n1;x\n").columns.tolist() == ["a"]  # separator detected, the text column left out
    assert load_csv(b"x;y\n1,5;2,25\n").to_numpy().tolist() == [[1.5, 2.25]]  # decimal commas


@pytest.mark.parametrize(
    "data,kwargs,match",
    [
        (b"", {}, "The CSV data is empty: it must be a non-empty CSV file with a header row"),
        (b"  \n\n", {}, "The CSV data is empty"),
        (b"a,b\n", {}, "has a header row but no data: it needs at least one data row"),
        (b"name,city\nann,rome\n", {}, "has no numeric column: its 2 columns hold text or are empty"),
        (b"a b\n1 x\n", {}, "single column: are its cells separated by something other than commas"),
        (b"a,b\n1,2\n3,\n", {}, r"missing values \(an empty cell, NA or NaN\) in 1 row, the first at row 3, "
                                r"column 'b': fill them in, or choose to drop the 1 row"),
        (b"a,b\n1,NA\n2,3\n", {}, "the first at row 2, column 'b'"),
        (b"a,b\n1,2\n\n3,4\n", {}, "the first at row 3, column 'a'"),
        (b"a,b\n1,2\n3,inf\n", {}, "infinite value at row 3, column 'b'"),
        (b"a,b\n-inf,2\n", {}, "infinite value at row 2, column 'a'"),
        (b"a,b\ncaf\xe9,1\n", {}, r"not UTF-8 text \(the first unreadable character is on line 2\): save it as "
                                 r"'CSV UTF-8'"),
        ("a,b\n1,2\n".encode("utf-16"), {}, "UTF-16 text, not UTF-8"),
        (b"a,b\n1,\x002\n", {}, "NUL characters"),
        (b"1,2\n3,4\n", {}, "numbers in its first line instead of column names: add a header row"),
        (b"a,b\n1,2\n1,2,3\n", {}, "not a regular table: row 3 has 3 cells but the header has 2"),
        (b"a,b\n1,2\n3,4\n5,6\n", dict(max_rows=2), "more than 2 data rows; at most 2 can be read"),
        (b"a,b,c\n1,2,3\n", dict(max_cols=2), "has 3 numeric columns; at most 2 can be read at once: choose the "
                                             "columns"),
        (b"a,b\n1,2\n3,4\n", dict(max_bytes=10), "is 12 bytes; at most 10 bytes can be read"),
        (GOOD, dict(columns=["a", "zz"]), "has no column 'zz'; its columns are 'a', 'b', 'name', 'c'"),
        (GOOD, dict(columns=["name"]), r"column 'name' holds text, not numbers \(the first text is at row 2\)"),
    ],
)
def test_load_csv_rejects(data, kwargs, match):
    with pytest.raises(ValueError, match=match):
        load_csv(data, **kwargs)


def test_load_csv_limits_are_inclusive():
    assert load_csv(b"a,b\n1,2\n3,4\n", max_rows=2, max_cols=2, max_bytes=12).shape == (2, 2)
    assert load_csv(b"a,b,c\n1,2,3\n", max_cols=2, columns=["a", "c"]).shape == (1, 2)


def test_load_csv_oversize_path_and_stream(tmp_path):
    path = tmp_path / "big.csv"
    path.write_bytes(b"a\n" + b"1\n" * 100)
    with pytest.raises(ValueError, match="is 202 bytes; at most 50 bytes can be read"):
        load_csv(path, max_bytes=50)

    class ReadOnly:
        def read(self, size=-1):
            return b"a\n" + b"1\n" * 100 if size < 0 else (b"a\n" + b"1\n" * 100)[:size]

    with pytest.raises(ValueError, match="is larger than 50 bytes; at most 50 bytes can be read"):
        load_csv(ReadOnly(), max_bytes=50)


@pytest.mark.parametrize(
    "source,kwargs,exc,match",
    [
        (123, {}, TypeError, "'source' parameter of load_csv must be a path, bytes or a binary file-like object. Got int"),
        (io.StringIO("a\n1\n"), {}, TypeError, r"opened in binary mode \('rb'\)"),
        ("/no/such/file.csv", {}, ValueError, "The file '/no/such/file.csv' does not exist or is not a file"),
        (GOOD, dict(columns="a"), TypeError, "'columns' parameter of load_csv"),
        (GOOD, dict(columns=[1]), TypeError, "'columns' parameter of load_csv"),
        (GOOD, dict(columns=[]), ValueError, "'columns' parameter of load_csv must be None or a non-empty"),
        (GOOD, dict(columns=["a", "a"]), ValueError, "distinct"),
        (GOOD, dict(max_rows=0), ValueError, "'max_rows' parameter of load_csv"),
        (GOOD, dict(max_cols=0), ValueError, "'max_cols' parameter of load_csv"),
        (GOOD, dict(max_bytes=0), ValueError, "'max_bytes' parameter of load_csv"),
    ],
)
def test_load_csv_argument_validation(source, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        load_csv(source, **kwargs)


def test_load_csv_text_stream_returning_non_bytes_is_a_type_error():
    class Weird:
        def read(self, size=-1):
            return 42

    with pytest.raises(TypeError, match="returning bytes. Got one returning int"):
        load_csv(Weird())


def test_load_csv_never_writes_or_echoes_the_data(monkeypatch):
    def no_files(*args, **kwargs):
        raise AssertionError("load_csv touched the file system")

    monkeypatch.setattr(builtins, "open", no_files)
    monkeypatch.setattr(tempfile, "mkstemp", no_files)
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", no_files)
    monkeypatch.setattr(tempfile, "TemporaryFile", no_files)
    assert load_csv(GOOD).shape == (3, 3)
    with pytest.raises(ValueError) as info:
        load_csv(b"salary,code\n1,SECRET-4711\n2,3\n", columns=["code"])
    assert "SECRET" not in str(info.value) and "row 2" in str(info.value)


# ----------------------------------------------------------------------------- csv_bytes
def test_csv_bytes_round_trip_is_exact():
    X = np.random.default_rng(0).random((50, 3)) * np.array([1.0, 1e-9, 1e9])
    X[0] = [1 / 3, -0.0, 5e-324]
    data = csv_bytes(X, ["a", "b b", "c,d"])
    assert data.startswith(b'a,b b,"c,d"\n')
    back = load_csv(data)
    assert list(back.columns) == ["a", "b b", "c,d"]
    np.testing.assert_array_equal(back.to_numpy(), X)
    assert csv_bytes(np.zeros((0, 2))) == b"x0,x1\n"


@pytest.mark.parametrize(
    "X,names,exc,match",
    [
        (np.zeros((2, 2)), ["a"], ValueError, "'names' parameter of csv_bytes must be 2 distinct column names"),
        (np.zeros((2, 2)), ["a", "a"], ValueError, "'names' parameter of csv_bytes"),
        (np.zeros((2, 2)), "ab", TypeError, "'names' parameter of csv_bytes"),
        (np.zeros((2, 2)), ["a", ""], TypeError, "'names' parameter of csv_bytes"),
        (np.array([[0.0, np.inf]]), None, ValueError, "'X' parameter of csv_bytes must contain only finite values"),
        ("not data", None, TypeError, "'X' parameter of csv_bytes"),
    ],
)
def test_csv_bytes_validation(X, names, exc, match):
    with pytest.raises(exc, match=match):
        csv_bytes(X, names)

"""Tests of read_table's ``exclude``: header names left out of the default column choice."""

import numpy as np
import pytest

from dpsynth_core import Domain
from dpsynth_core.tabular import CSVError, read_table

PEOPLE = b"name,age,income\nalice,34,52000\nbob,51,61000\ncarol,forty,48000\n"


def test_an_excluded_column_is_not_read():
    t = read_table(b"a,b,c\n1,2,3\n4,5,6\n", exclude=["b"])
    assert t.frame.to_dict("list") == {"a": [1.0, 4.0], "c": [3.0, 6.0]}
    assert t.numeric == ("a", "c") and t.text_columns == () and t.empty_columns == ()
    assert read_table(b"a,b\n1,2\n", exclude=[]).columns == ("a", "b")  # empty: nothing left out
    assert read_table(b"a,b\n1,2\n", exclude=()).columns == ("a", "b")
    assert read_table(b"a,b\n1,2\n", columns=["b"], exclude=()).columns == ("b",)


def test_bad_cells_in_an_excluded_column_are_not_refused():
    with pytest.raises(CSVError) as info:
        read_table(PEOPLE)
    assert info.value.kind == "not_a_number" and info.value.column == "age" and info.value.row == 4
    t = read_table(PEOPLE, exclude=["age"])
    assert t.frame.to_dict("list") == {"income": [52000.0, 61000.0, 48000.0]}
    assert t.text_columns == ("name",)
    # nor its missing values, grouped digits or decimal commas (which would decide the decimal mark)
    t = read_table(b"x;y\n1.5;1,5\n2.5;\n", exclude=("y",), missing="error")
    assert t.frame.to_dict("list") == {"x": [1.5, 2.5]} and t.dialect["decimal"] == "."
    t = read_table(b"x,y\n1,inf\n2,1e999\n", exclude=["y"])
    assert np.isfinite(t.frame.to_numpy()).all()


def test_the_notes_name_the_excluded_columns():
    t = read_table(PEOPLE, exclude=["age"])
    assert "Left out as asked: 'age'." in t.notes
    assert "Left out 1 column holding text: 'name'." in t.notes
    assert "Read 3 rows and 1 numeric column: 'income'." in t.notes
    t = read_table(b"a,b,c,d\n1,2,3,4\n", exclude=["d", "b"])
    assert "Left out as asked: 'd', 'b'." in t.notes and t.columns == ("a", "c")
    assert not any("as asked" in n for n in read_table(b"a,b\n1,2\n").notes)


def test_an_excluded_text_or_empty_column_is_left_out_as_asked_only():
    t = read_table(b"a,name,e\n1,x,\n2,y,\n", exclude=["name", "e"])
    assert t.columns == ("a",) and t.text_columns == () and t.empty_columns == ()
    assert "Left out as asked: 'name', 'e'." in t.notes


def test_excluding_every_numeric_column_is_a_clear_error():
    with pytest.raises(CSVError, match=r"no numeric column besides the 2 columns left out \('age', 'income'\)") as info:
        read_table(PEOPLE, exclude=["age", "income"])
    assert info.value.kind == "no_numeric_column"


def test_exclude_with_columns_or_a_domain_is_refused():
    with pytest.raises(ValueError, match=r"The 'exclude' parameter of read_table must be None or empty when "
                                         r"'columns' is given") as info:
        read_table(PEOPLE, columns=["income"], exclude=["age"])
    assert not isinstance(info.value, CSVError)
    dom = Domain([0], [1e6], names=("income",))
    with pytest.raises(ValueError, match="The 'exclude' parameter of read_table must be None or empty when a "
                                         "domain is given"):
        read_table(PEOPLE, domain=dom, exclude=["age"])


def test_an_unknown_excluded_name_is_refused_like_an_unknown_column():
    with pytest.raises(CSVError) as info:
        read_table(PEOPLE, exclude=["agee"])
    err = info.value
    assert err.kind == "no_such_column" and err.column == "agee"
    assert "has no column 'agee' (did you mean 'age'?); its columns are 'name', 'age', 'income'" in str(err)


def test_excluding_a_declared_categorical_column_is_refused():
    with pytest.raises(ValueError, match="The 'exclude' parameter of read_table must be names of columns that are "
                                         "not declared categorical") as info:
        read_table(PEOPLE, categories={"name": ["alice", "bob", "carol"]}, exclude=["name", "age"])
    assert not isinstance(info.value, CSVError)
    t = read_table(PEOPLE, categories={"name": ["alice", "bob", "carol"]}, exclude=["age"])
    assert t.columns == ("name", "income") and t.categorical == ("name",)


@pytest.mark.parametrize("bad", ["age", b"age", 3, ["age", 3], {"age"}])
def test_exclude_must_be_a_sequence_of_names(bad):
    with pytest.raises(TypeError, match="The 'exclude' parameter of read_table must be None or a sequence of column"):
        read_table(PEOPLE, exclude=bad)


def test_exclude_must_not_repeat_a_name():
    with pytest.raises(ValueError, match="a sequence of distinct column names. Got \\['age', 'age'\\]"):
        read_table(PEOPLE, exclude=["age", "age"])

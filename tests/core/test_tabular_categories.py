"""Declared categorical columns in the readers (CSV ``read_table``, ``read_parquet``) and the writer
(``csv_bytes`` / ``export.synthetic_csv``), issue 26 item 4.

Rules tested: a declared column is read as text whatever it looks like; each cell (stripped) must be a
declared label, a missing value, or goes to the column's ``other`` category; any other value is a
CSVError naming the row, the column and the value; the frame is accepted by ``Domain.read`` and the
mechanisms; a release written with ``synthetic_csv`` reads back to the same encoded rows.
"""

from __future__ import annotations

import io
import unicodedata

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import Domain, export
from dpsynth_core.domain import MAX_CATEGORIES
from dpsynth_core.mechanisms import run
from dpsynth_core.tabular import CSVError, csv_bytes, load_csv, read_parquet, read_table

CATS = {"sex": ["F", "M"], "region": ["north", "south", "east"]}


def _csv(text: str) -> bytes:
    return text.encode("utf-8")


HEALTH = _csv("age,sex,bmi,region,grade\n"
              "34, F ,22.5,north,1\n"
              "51,M,27.1,south,2\n"
              "45,F,31,east,1\n"
              "29,M,24.3,north,3\n")


# ------------------------------------------------------------------------------------------ CSV
def test_declared_columns_are_read_as_text_and_matched():
    t = read_table(HEALTH, categories={**CATS, "grade": ["1", "2", "3"]})
    assert t.columns == ("age", "sex", "bmi", "region", "grade")  # the file's order
    assert t.numeric == ("age", "bmi") and t.categorical == ("sex", "region", "grade")
    assert t.text_columns == ()
    f = t.frame
    assert f["age"].dtype == np.float64 and isinstance(f["sex"].dtype, pd.CategoricalDtype)
    # a column of numbers declared categorical is text: its categories are the declared labels
    assert list(f["grade"].cat.categories) == ["1", "2", "3"]
    assert f["sex"].astype(str).tolist() == ["F", "M", "F", "M"]  # ' F ' stripped
    assert list(f["region"].cat.categories) == CATS["region"]  # the declared order, not the file's
    assert "2 numeric columns: 'age', 'bmi', and 3 categorical columns" in t.notes[-1]
    dom = Domain([0, 10], [120, 60], names=list(t.columns), categories={**CATS, "grade": ["1", "2", "3"]})
    enc = dom.read(f)
    assert enc[:, 1].tolist() == [0, 1, 0, 1] and enc[:, 4].tolist() == [0, 1, 0, 2]
    assert load_csv(HEALTH, categories=CATS)["region"].astype(str).tolist() == ["north", "south", "east", "north"]


def test_without_declaration_text_columns_are_left_out_as_before():
    t = read_table(HEALTH)
    assert t.columns == ("age", "bmi", "grade") and t.text_columns == ("sex", "region")
    assert t.categorical == ()


def test_columns_select_numeric_ones_and_declared_columns_follow():
    t = read_table(HEALTH, columns=["bmi"], categories={"region": CATS["region"], "sex": CATS["sex"]})
    assert t.columns == ("bmi", "region", "sex")  # then the declared ones, in the order of categories
    t2 = read_table(HEALTH, columns=["sex", "bmi"], categories=CATS)
    assert t2.columns == ("sex", "bmi", "region")
    with pytest.raises(CSVError, match="holds text, not numbers .* or declare its categories") as e:
        read_table(HEALTH, columns=["bmi", "region"])
    assert e.value.kind == "text_column"


def test_a_whole_domain_reads_its_columns_with_its_other_category():
    dom = Domain([0], [120], names=["age", "region"], categories={"region": ["north", "south"]},
                 other={"region": "elsewhere"})
    t = read_table(HEALTH, domain=dom)
    assert t.columns == ("age", "region")
    assert t.frame["region"].astype(str).tolist() == ["north", "south", "elsewhere", "north"]
    assert any(n.startswith("Mapped 1 value of column 'region'") and "'elsewhere'" in n for n in t.notes)
    np.testing.assert_array_equal(dom.read(t.frame)[:, 1], [0, 1, 2, 0])


def test_undeclared_value_names_row_column_and_value():
    bad = _csv("age,region\n30,north\n31,\"north\"\n\n32,West\n33,West\n")  # a blank line is row 4
    with pytest.raises(CSVError) as e:
        read_table(bad, categories={"region": ["north", "south"]}, what="the file 'h.csv'")
    msg = str(e.value)
    assert e.value.kind == "category" and e.value.row == 5 and e.value.column == "region"
    assert msg.startswith("The file 'h.csv' has a value outside the declared categories of column 'region' at "
                          "row 5: 'West'.")
    assert "'north', 'south'; 2 rows hold undeclared values" in msg and "'other' category" in msg
    assert "\n" not in msg
    # an error even in a row that missing="drop" would drop: never a silent drop
    with pytest.raises(CSVError, match="at row 3: 'West'"):
        read_table(_csv("age,region\n30,north\n,West\n"), categories={"region": ["north"]}, missing="drop")


@pytest.mark.parametrize(("cell", "labels", "hint"), [
    ("1.0", ["1", "2"], "matched as text, exactly: '1.0' is not the declared '1'"),
    ("north", ["North", "South"], "letter case included: did you mean 'North'?"),
    ("37.5", ["young", "old"], "a number: if the column is numeric, give it bounds instead of categories"),
    ("nroth", ["north", "south"], "did you mean 'north'?"),
    (unicodedata.normalize("NFD", "Gen\u00e8ve"), ["Gen\u00e8ve", "Bern"], "only in how its accents are encoded"),
])
def test_undeclared_value_hints(cell, labels, hint):
    with pytest.raises(CSVError) as e:
        read_table(_csv(f"x,c\n1,{cell}\n"), categories={"c": labels})
    assert hint in str(e.value) and e.value.kind == "category"


def test_missing_values_in_a_categorical_column():
    data = _csv("x,c\n1,a\n2,\n3,NA\n4,None\n5,b\n")
    with pytest.raises(CSVError) as e:
        read_table(data, categories={"c": ["a", "b"]})
    assert e.value.kind == "missing" and e.value.row == 3 and e.value.column == "c" and e.value.count == 3
    t = read_table(data, categories={"c": ["a", "b"]}, missing="drop")
    assert t.frame["c"].astype(str).tolist() == ["a", "b"] and t.dropped_row_numbers == (3, 4, 5)
    # a declared label wins over a missing-value token: a category may be called NA or None
    t2 = read_table(data, categories={"c": ["a", "b", "NA", "None"]}, missing="drop")
    assert t2.frame["c"].astype(str).tolist() == ["a", "NA", "None", "b"] and t2.dropped_rows == 1
    # the 'other' category never receives a missing value
    dom = Domain([0], [9], names=["x", "c"], categories={"c": ["a"]}, other={"c": "z"})
    with pytest.raises(CSVError, match="missing values"):
        read_table(data, domain=dom)


def test_declared_column_missing_from_the_file_and_bad_declarations():
    with pytest.raises(CSVError, match=r"has no declared categorical column 'regoin' \(did you mean 'region'\?\)") as e:
        read_table(HEALTH, categories={"regoin": ["north"]})
    assert e.value.kind == "no_such_column"
    with pytest.raises(ValueError, match="an empty list for column 'sex'"):
        read_table(HEALTH, categories={"sex": []})
    with pytest.raises(ValueError, match="'F' twice in column 'sex'"):
        read_table(HEALTH, categories={"sex": ["F", "M", "F "]})
    with pytest.raises(ValueError, match="The 'categories' parameter of read_table must be"):
        read_table(HEALTH, categories={"sex": [""]})
    with pytest.raises(ValueError, match=f"at most {MAX_CATEGORIES} categories per column"):
        read_table(HEALTH, categories={"sex": [f"c{i}" for i in range(MAX_CATEGORIES + 1)]})
    dom = Domain([0], [1], names=["age", "sex"], categories={"sex": ["F", "M"]})
    with pytest.raises(ValueError, match="None when a domain is given"):
        read_table(HEALTH, domain=dom, columns=["age"])
    with pytest.raises(TypeError, match="pass a Domain as domain="):
        read_table(HEALTH, categories=dom)
    with pytest.raises(CSVError, match="has no column of the domain 'weight'"):
        read_table(HEALTH, domain=Domain([0], [1], names=["weight"]))


def test_a_thousand_categories_and_unicode_names():
    labels = [f"código-{i:04d}" for i in range(1000)]
    rng = np.random.default_rng(3)
    picks = rng.integers(0, 1000, 500)
    text = "ñame,código\n" + "".join(f"{i / 7!r},{labels[k]}\n" for i, k in enumerate(picks))
    t = read_table(_csv(text), categories={"código": labels})
    assert t.columns == ("ñame", "código")
    np.testing.assert_array_equal(t.frame["código"].cat.codes.to_numpy(), picks)
    with pytest.raises(CSVError, match=r"'código-0001', .* … \(1000 in all\)"):
        read_table(_csv(text + "1,código-1000\n"), categories={"código": labels})


def test_semicolon_file_with_decimal_commas_and_labels_with_commas():
    # the categorical column's commas do not count as decimal commas, nor its words as bad numbers
    data = _csv("x;city\n1,5;Paris, France\n2,25;Rome\n")
    t = read_table(data, categories={"city": ["Paris, France", "Rome"]})
    assert t.frame["x"].tolist() == [1.5, 2.25] and t.dialect["decimal"] == ","


def test_file_like_sources_and_the_column_limit():
    for src in (io.BytesIO(HEALTH), HEALTH, bytearray(HEALTH)):
        assert read_table(src, categories=CATS).categorical == ("sex", "region")
    with pytest.raises(CSVError, match="has 4 columns to read; at most 3"):
        read_table(HEALTH, categories=CATS, columns=["age", "bmi"], max_cols=3)


# ------------------------------------------------------------------------------------------ Parquet
def _parquet(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


PQ = pd.DataFrame({"age": [30.0, 41.5, 52.0, 63.0], "sex": pd.Categorical(["F", "M", "F", "F"]),
                   "region": ["north", " south", "east", "north"], "grade": pd.array([1, 2, 3, 1], dtype="Int64"),
                   "note": ["a", "b", "c", "d"]})


def test_parquet_string_categorical_and_integer_columns():
    t = read_parquet(_parquet(PQ), categories={**CATS, "grade": ["1", "2", "3"]})
    assert t.columns == ("age", "sex", "region", "grade") and t.text_columns == ("note",)
    assert t.frame["region"].astype(str).tolist() == ["north", "south", "east", "north"]
    assert t.frame["grade"].astype(str).tolist() == ["1", "2", "3", "1"]
    assert t.dialect == {"format": "parquet"}
    # the same table as CSV reads to the same frame
    c = read_table(csv_bytes(PQ.drop(columns="note").astype({"grade": str})),
                   categories={**CATS, "grade": ["1", "2", "3"]})
    pd.testing.assert_frame_equal(t.frame, c.frame)


def test_parquet_hostile_inputs():
    data = _parquet(PQ)
    with pytest.raises(CSVError) as e:
        read_parquet(data, categories={"region": ["north", "south"]})
    assert e.value.kind == "category" and e.value.row == 3 and "at data row 3: 'east'" in str(e.value)
    with pytest.raises(CSVError, match="'age', declared categorical, holds floating-point numbers .* give it bounds"):
        read_parquet(data, categories={"age": ["30"]})
    with pytest.raises(CSVError, match="column 'note' holds text, not numbers"):
        read_parquet(data, columns=["age", "note"])
    holes = PQ.assign(grade=pd.array([1, None, 3, None], dtype="Int64"), sex=pd.Categorical(["F", None, "M", ""]))
    with pytest.raises(CSVError, match=r"missing values \(a null, or an empty text in a categorical column\) in 2 rows, "
                                       r"the first at data row 2, column 'sex'"):
        read_parquet(_parquet(holes), categories={"sex": ["F", "M"], "grade": ["1", "2", "3"]})
    t = read_parquet(_parquet(holes), categories={"sex": ["F", "M"], "grade": ["1", "3"]}, missing="drop")
    assert t.frame["grade"].astype(str).tolist() == ["1", "3"] and "data rows 2, 4" in t.notes[-1]
    with pytest.raises(CSVError, match="has 4 data rows; at most 3") as e:
        read_parquet(data, max_rows=3)
    assert e.value.kind == "too_many_rows"
    with pytest.raises(CSVError, match="is not a readable Parquet file"):
        read_parquet(HEALTH)
    with pytest.raises(CSVError, match="has no declared categorical column 'Sex'"):
        read_parquet(data, categories={"Sex": ["F"]})
    with pytest.raises(CSVError, match="is a Parquet file, not a CSV file: read it with read_parquet") as e:
        read_table(data)
    assert e.value.kind == "binary"


# ------------------------------------------------------------------------------------------ writing
HOSTILE = ["a,b", 'say "hi"', "line\nbreak", "NA", "01", "ünïcödé ✓", "=1+2", "x;y|z", "None"]


def test_csv_bytes_round_trips_hostile_labels():
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({"v": rng.random(n) * 1e6 - 3.0,
                          "label": pd.Categorical.from_codes(rng.integers(0, len(HOSTILE), n), categories=HOSTILE),
                          "ünï": rng.random(n)})
    data = csv_bytes(frame)
    back = read_table(data, categories={"label": HOSTILE})
    pd.testing.assert_frame_equal(back.frame, frame)  # numbers bit for bit, labels exactly
    with pytest.raises(ValueError, match="without missing values"):
        csv_bytes(frame.assign(label=frame["label"].cat.set_categories(HOSTILE + ["q"]).where(frame.index > 0)))


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_release_reads_back_to_the_same_rows(fmt, tmp_path):
    rng = np.random.default_rng(1)
    n = 600
    labels = {"city": ["Zürich", "São Paulo, BR", 'the "Big" Apple'], "sex": CATS["sex"]}
    df = pd.DataFrame({"age": rng.uniform(18, 90, n), "city": rng.choice(labels["city"], n),
                       "sex": rng.choice(labels["sex"], n), "bmi": rng.normal(27, 4, n).clip(15, 45)})
    dom = Domain([0, 10], [120, 60], names=["age", "city", "sex", "bmi"], categories=labels)
    rel = run("pmm", df, dom, epsilon=1.0, rng=5)
    assert isinstance(rel.synthetic, pd.DataFrame)
    perm = np.random.default_rng(11).permutation(len(rel.synthetic))
    want = dom.read(rel.synthetic)[perm]
    if fmt == "csv":
        path = tmp_path / "syn.csv"
        path.write_bytes(export.synthetic_csv(rel, rng=11))
        back = read_table(path, domain=dom)
    else:
        path = tmp_path / "syn.parquet"
        rel.synthetic.iloc[perm].to_parquet(path, index=False)
        back = read_parquet(path, domain=dom)
    np.testing.assert_array_equal(dom.read(back.frame), want)
    assert back.columns == dom.names

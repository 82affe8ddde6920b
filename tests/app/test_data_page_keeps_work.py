"""The Data page never loses the user's work ("never lost work"): an upload being prepared (the file, the
columns chosen, the bounds and categories typed and saved) survives a visit to another page, and the whole
uploaded table comes back after "Use the numeric columns of <name> only" (whose help promises it).

Streamlit forgets a widget's state on a run that does not draw it (another page's run): the page keeps
the file and what was chosen and typed in the session (dashboard.state) and gives them back to the widgets.
The bounds and categories are typed in a form: they reach the page with one of its buttons ("Use this
data", "Save for later"), as in a browser, so these tests type them and press one.
"""

from __future__ import annotations

from apptest import errors, exceptions, goto, new_app


def _vitals(n: int = 300) -> bytes:
    """age, sex (F/M), region (N/S/E/W), bp: n rows."""
    lines = ["age,sex,region,bp"]
    lines += [f"{18 + i % 70},{'FM'[i % 2]},{'NSEW'[i % 4]},{90 + (i * 7) % 80}" for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


TYPED = {"data_lo_age": 0.0, "data_hi_age": 120.0, "data_lo_bp": 50.0, "data_hi_bp": 250.0}
CATEGORIES = {"data_cat_sex": "F|M", "data_cat_region": "N|S|E|W"}
COLUMNS = ["age", "sex", "region", "bp"]


def _prepare(at, name: str = "vitals.csv"):
    """Upload the file, choose every column, type the bounds and the categories and save them (without using
    the file)."""
    goto(at, "data")
    at.radio(key="data_source").set_value("Upload CSV").run()
    at.file_uploader(key="data_upload").set_value((name, _vitals(), "text/csv")).run()
    assert not at.exception, exceptions(at)
    at.multiselect(key=f"data_cols_{name}").set_value(COLUMNS).run()
    for key, value in TYPED.items():
        at.number_input(key=key).set_value(value)
    for key, value in CATEGORIES.items():
        at.text_area(key=key).input(value)
    at.button(key="data_save_upload").click().run()
    assert not at.exception and not errors(at), (exceptions(at), errors(at))
    return at


def _assert_form_is_back(at, name: str = "vitals.csv"):
    assert not at.exception, exceptions(at)
    assert not errors(at), errors(at)
    assert at.multiselect(key=f"data_cols_{name}").value == COLUMNS
    for key, value in TYPED.items():
        assert at.number_input(key=key).value == value, key
    for key, value in CATEGORIES.items():
        assert at.text_area(key=key).value == value, key


def _assert_used(at, name: str = "vitals"):
    d = at.session_state["dataset"]
    assert d.name == name and d.domain.names == tuple(COLUMNS) and d.n == 300
    assert d.domain.categories == {"sex": ("F", "M"), "region": ("N", "S", "E", "W")}
    assert d.domain.lower == (0.0, 50.0) and d.domain.upper == (120.0, 250.0) and d.domain.declared


def test_an_upload_being_prepared_survives_a_visit_to_another_page():
    at = _prepare(new_app())
    goto(at, "pmm")
    assert not at.exception, exceptions(at)
    goto(at, "data")
    # the file is still there (kept in this session's memory), with everything typed
    assert any("vitals.csv" in c.value for c in at.caption), [c.value for c in at.caption]
    _assert_form_is_back(at)
    at.button(key="data_use_upload").click().run()
    assert not at.exception and not errors(at), (exceptions(at), errors(at))
    _assert_used(at)


def test_uploading_the_same_file_again_gives_the_typed_values_back():
    at = _prepare(new_app())
    goto(at, "pmm")
    goto(at, "data")
    at.file_uploader(key="data_upload").set_value(("vitals.csv", _vitals(), "text/csv")).run()
    _assert_form_is_back(at)


def test_clearing_the_file_forgets_it_and_what_was_typed():
    at = _prepare(new_app())
    at.file_uploader(key="data_upload").set_value(None).run()
    assert not at.exception, exceptions(at)
    assert "data_use_upload" not in [b.key for b in at.button]  # no file: nothing to use
    goto(at, "pmm")
    goto(at, "data")
    assert "data_use_upload" not in [b.key for b in at.button]
    at.file_uploader(key="data_upload").set_value(("vitals.csv", _vitals(), "text/csv")).run()
    assert at.multiselect(key="data_cols_vitals.csv").value == ["age", "bp"]  # the default choice: a fresh start
    assert at.number_input(key="data_lo_age").value is None


def test_a_kept_file_can_be_forgotten_after_coming_back():
    at = _prepare(new_app())
    goto(at, "pmm")
    goto(at, "data")
    at.button(key="data_forget_upload").click().run()
    assert not at.exception, exceptions(at)
    assert "data_use_upload" not in [b.key for b in at.button]
    assert not any("vitals.csv" in c.value for c in at.caption)


def test_the_whole_uploaded_table_comes_back_after_using_its_numeric_columns_only():
    at = _prepare(new_app())
    at.button(key="data_use_upload").click().run()
    _assert_used(at)
    goto(at, "compare")
    assert not at.exception, exceptions(at)
    button = at.button(key="numeric_only_compare")
    assert "The Data page brings the whole table back" in button.help
    button.click().run()
    assert not at.exception, exceptions(at)
    # the confirmation shows where the button was pressed (it used to wait for the next visit to the Data page)
    assert any("Using the numeric columns of `vitals`: age, bp." in i.value for i in at.info), [i.value for i in at.info]
    part = at.session_state["dataset"]
    assert part.domain.names == ("age", "bp") and not part.domain.is_mixed
    goto(at, "data")
    assert not at.exception, exceptions(at)
    whole = at.button(key="data_whole_upload")
    assert whole.label == "Use the whole table vitals again"
    whole.click().run()
    assert not at.exception and not errors(at), (exceptions(at), errors(at))
    _assert_used(at)
    assert at.session_state["dataset_source"].kind == "upload"
    assert not at.session_state["dataset_source"].bounds_from_data
    assert "data_whole_upload" not in [b.key for b in at.button]  # offered only while another table is in use
    # and again: the whole table stays available while the session lasts
    goto(at, "compare")
    at.button(key="numeric_only_compare").click().run()
    goto(at, "data")
    at.button(key="data_whole_upload").click().run()
    _assert_used(at)


def _wide(n: int = 200, k: int = 5) -> bytes:
    lines = [",".join(f"x{j}" for j in range(k))]
    lines += [",".join(f"{((i * (j + 3)) % 97) / 97:.4f}" for j in range(k)) for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


def test_many_columns_get_their_bounds_typed_once():
    """Five numeric columns: one "lo:hi" fills the ten bound boxes (each still editable); a typo is said."""
    at = goto(new_app(), "data")
    at.radio(key="data_source").set_value("Upload CSV").run()
    at.file_uploader(key="data_upload").set_value(("wide.csv", _wide(), "text/csv")).run()
    names = [f"x{j}" for j in range(5)]
    at.multiselect(key="data_cols_wide.csv").set_value(names).run()
    at.text_input(key="data_all_wide.csv").input("0:oops")
    at.button(key="data_fill_wide.csv").click().run()
    assert any("Type the bounds as lo:hi" in e.value for e in at.error), [e.value for e in at.error]
    assert at.number_input(key="data_lo_x0").value is None  # nothing filled by a typo
    at.text_input(key="data_all_wide.csv").input("0:1")
    at.button(key="data_fill_wide.csv").click().run()
    assert not at.exception, exceptions(at)
    assert [at.number_input(key=f"data_lo_{c}").value for c in names] == [0.0] * 5
    assert [at.number_input(key=f"data_hi_{c}").value for c in names] == [1.0] * 5
    at.number_input(key="data_hi_x4").set_value(2.0)  # one box changed by hand afterwards
    at.button(key="data_use_upload").click().run()
    assert not at.exception and not errors(at), (exceptions(at), errors(at))
    d = at.session_state["dataset"]
    assert d.domain.names == tuple(names) and d.domain.upper == (1.0, 1.0, 1.0, 1.0, 2.0) and d.domain.declared

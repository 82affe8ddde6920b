"""The Data page's upload: the file kept in the session, the reader's refusals with the offer to drop rows or
leave a column out, the preview, and the declaration of the public domain.

The declaration (:func:`_declare`) is a fragment: choosing the columns reruns only it, not the page. The
bounds and the categories are typed in a form with one submit, "Use this data" (or "Save for later", which
keeps what was typed without using it): typing reruns nothing. Everything chosen and typed is kept in the
session (:func:`dashboard.state.upload_values`) and comes back after a visit to another page; what was typed
in the form is kept once a button of the form is pressed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from dpsynth_core.domain import Domain
from dpsynth_core.tabular import CSVError
from dpsynth_core.validation import plural

from . import state
from .compute import safe
from .data import Source
from .upload import (
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_COLUMNS,
    MAX_UPLOAD_ROWS,
    UploadForm,
    read_upload,
    small_table_note,
)
from .widgets import OWNER

__all__ = ["upload_section"]


@st.cache_data(show_spinner=False, max_entries=4)
def _read(data: bytes, filename: str, missing: str, exclude: tuple = ()):
    """The uploaded file as a preview shows it (the library's text-preview mode), cached on its bytes."""
    return read_upload(data, filename, missing=missing, exclude=exclude, keep_text=True)


def upload_section() -> None:
    """The uploader, the file kept across pages, and the work on it."""
    st.caption(f"A CSV file with a header row; at most {MAX_UPLOAD_ROWS:,} rows and {MAX_UPLOAD_COLUMNS} columns. "
               "The file stays in memory: it is never written to disk.")
    up = st.file_uploader("CSV file", type=["csv", "txt"], key="data_upload", on_change=_upload_changed)
    kept = state.kept_file()
    if up is not None:  # it replaces the kept one (a file above the cap is refused by the reader, never kept)
        kept = (up.name, up.getvalue())
        if up.size <= MAX_UPLOAD_BYTES:
            state.keep_file(*kept)
        else:
            state.forget_file()
    if up is None and kept is not None:
        a, b = st.columns([4, 1], vertical_alignment="center")
        a.caption(f"Still working on `{kept[0]}`, kept in this session's memory with what you typed (never written "
                  "to disk). Upload another file to replace it.")
        b.button("Forget this file", key="data_forget_upload", on_click=state.forget_file)
    if kept is not None:
        filename, raw = kept
        values = state.upload_values(filename)
        table, drop_shown = _preview(filename, raw, values)
        if table is not None:
            _declare(filename, raw, table, drop_shown)


def _upload_changed() -> None:
    """The uploader changed: emptied by the user (its ×), the kept file is forgotten; a new file replaces it
    (on the run)."""
    if state.widget_value("data_upload") is None:
        state.forget_file()


def _kept(values: dict, widget: Callable, label: str, key: str, default: Any = None, *, arg: str = "value",
          **kwargs: Any) -> Any:
    """``widget`` drawn with the value kept in ``values`` (``default`` before anything was chosen), its value
    kept there again (copied on every run that draws it)."""
    values[key] = widget(label, key=key, **{arg: values.get(key, default)}, **kwargs)
    return values[key]


def _checked(values: dict, key: str) -> bool:
    """Whether the box ``key`` is checked, read before the box is drawn (its kept value on a first run)."""
    return bool(state.widget_value(key, values.get(key, False)))


def _leave_out(filename: str, column: str) -> None:
    """The box "Leave out the column" of ``column`` changed: add it to (or take it from) the columns left out."""
    rest = [c for c in state.excluded_columns(filename) if c != column]
    state.set_excluded_columns(filename, tuple(rest + ([column] if state.widget_value(
        f"data_skip_{filename}_{column}") else [])))


def _leave_out_box(values: dict, filename: str, column: str) -> None:
    _kept(values, st.checkbox, f"Leave out the column {column!r} and read the rest", f"data_skip_{filename}_{column}",
          False, on_change=_leave_out, args=(filename, column))


def _preview(filename: str, raw: bytes, values: dict):
    """Read the file (the library's rules); on a refusal, the error and what can be done about it (drop the rows
    with a missing value, leave a column out); then the preview. Returns (the table or None, whether the box
    "drop the rows" is on screen)."""
    drop_key = f"data_drop_{filename}"
    drop = _checked(values, drop_key)
    skipped = tuple(c for c in state.excluded_columns(filename) if _checked(values, f"data_skip_{filename}_{c}"))
    state.set_excluded_columns(filename, skipped)  # the columns left out: those whose box is still checked
    table, drop_shown = None, False
    try:
        table = _read(raw, filename, "drop" if drop else "error", skipped)
    except CSVError as exc:
        st.error(str(exc))
        if exc.kind == "missing":
            _kept(values, st.checkbox, "Drop the row with a missing value" if exc.count == 1 else
                  f"Drop the {plural(exc.count, 'row')} with missing values", drop_key, False)
            drop_shown = True
        if exc.kind in ("not_a_number", "decimal", "infinite") and exc.column and exc.column not in skipped:
            _leave_out_box(values, filename, exc.column)
    except (ValueError, TypeError) as exc:
        st.error(str(exc))
    if skipped:  # keep the choices on screen (and their state alive) so that each can be undone
        st.caption(f"Left out as you asked: {', '.join(repr(c) for c in skipped)} (uncheck a box to read its column "
                   "again).")
    for c in skipped:
        _leave_out_box(values, filename, c)
    if table is None:
        return None, drop_shown
    if drop:  # keep the choice on screen (and its state alive) so that it can be undone
        _kept(values, st.checkbox, "Drop the rows with missing values", drop_key, False)
        drop_shown = True
    for note in table.notes:
        if note.topic != "excluded":  # said above, with the boxes
            st.caption(note)
    if table.text_columns:
        st.caption(f"Columns holding text: {', '.join(repr(c) for c in table.text_columns)}. Add them to *Columns to "
                   "use* to use them as categorical columns, with the categories you declare below.")
    st.caption("First rows (:material/lock: your private data, shown to you only):")
    st.dataframe(table.preview.head(10), hide_index=True)
    return table, drop_shown


@st.fragment
def _declare(filename: str, raw: bytes, table, drop_shown: bool) -> None:
    """The columns to use and what the "NOT private" shortcuts take (a change reruns this fragment only), then
    the form of the bounds and the categories (one submit)."""
    values = state.upload_values(filename)
    order = list(table.preview.columns)
    cols_key = f"data_cols_{filename}"
    if cols_key in values:  # a column no longer read (left out) cannot be chosen
        values[cols_key] = [c for c in values[cols_key] if c in order]
    picked = _kept(values, st.multiselect, "Columns to use", cols_key, list(table.numeric)[:2], arg="default",
                   options=order, help="The columns the mechanisms see (in the file's order). A column holding text "
                                       "becomes a categorical column with the categories you declare.")
    form = UploadForm(filename, columns=tuple(c for c in order if c in picked), text_columns=table.text_columns,
                      excluded=state.excluded_columns(filename))
    st.markdown("**Public bounds**: type the range each column can take *in principle* (an age in [0, 120], an income "
                "in [0, 10⁶]), not what this file happens to contain. Values outside are moved onto the box's edge.")
    from_data = _kept(values, st.checkbox, "Use the data's own range instead (NOT private: for exploration only)",
                      f"data_from_data_{filename}", False,
                      help="The smallest and largest values of your data leak information about the people at the "
                           "extremes: with this box no release is differentially private, and downloads are disabled.")
    cats_from_data = False
    if form.categorical:
        cats_from_data = _kept(values, st.checkbox, "Use the values in this file as the categories — NOT private, for "
                               "exploration only", f"data_cats_from_data_{filename}", False,
                               help="The values present in your file are themselves private: with them no release "
                                    "of this dataset is differentially private (its label and exports say so), and "
                                    "downloads are disabled.")
        if not drop_shown:
            _kept(values, st.checkbox, "Drop the rows with missing values", f"data_drop_{filename}", False,
                  help="Rows with an empty or NA cell in a column used are left out (how many is said).")
    with st.form(f"data_form_{filename}", border=False, enter_to_submit=False):
        _declaration_boxes(values, filename, form, from_data, cats_from_data)
        a, b = st.columns([1, 4], vertical_alignment="center")
        use = a.form_submit_button("Use this data", type="primary", key="data_use_upload")
        b.form_submit_button("Save for later", key="data_save_upload",
                             help="Keeps what you typed in this session's memory (with the file), without using it.")
    form = _typed(values, form, from_data, cats_from_data)
    if use:
        _use(form, raw, table)


def _declaration_boxes(values: dict, filename: str, form: UploadForm, from_data: bool, cats_from_data: bool) -> None:
    """The form's boxes: the bounds of the numeric columns (one range for all of them, typed once, when there are
    three or more) and the categories of the categorical ones, with an optional 'other' category."""
    numeric = form.numeric
    if "_fill_error" in values:  # the last "Fill the boxes" could not read its range
        st.error(values.pop("_fill_error"))
    if not from_data and len(numeric) >= 3:  # many columns: one range typed once, each box still editable
        a, b = st.columns([3, 1], vertical_alignment="bottom")
        a.text_input("The same bounds for every numeric column (lo:hi)", key=f"data_all_{filename}",
                     placeholder="e.g. 0:1", help="Fills every lower and upper bound box below; change any of them "
                                                  "afterwards. Public knowledge, as every bound.")
        b.form_submit_button("Fill the boxes", key=f"data_fill_{filename}", on_click=_fill_bounds,
                             args=(values, filename, tuple(numeric)))
    for c in [] if from_data else numeric:
        a, b = st.columns(2)
        _kept(values, a.number_input, f"lower bound of {c}", f"data_lo_{c}", format="%.6g", placeholder="type it")
        _kept(values, b.number_input, f"upper bound of {c}", f"data_hi_{c}", format="%.6g", placeholder="type it")
    if form.categorical and not cats_from_data:
        st.markdown("**Public categories**: type every value each text column can take *in principle* (the choices "
                    "of the form it comes from), one per line or separated by `|` (`F|M`), not the values this file "
                    "happens to contain: one rare value can reveal one person. A value outside them is refused with "
                    "its row, unless you name an *other* category for it.")
        for c in form.categorical:
            a, b = st.columns([3, 1])
            _kept(values, a.text_area, f"categories of {c}", f"data_cat_{c}", "", height=90,
                  placeholder="one per line, or a|b|c")
            _kept(values, b.text_input, f"'other' category of {c} (optional)", f"data_other_{c}", "",
                  placeholder="e.g. other",
                  help="Values outside the list go to this category instead of being refused (it is added to the list).")


def _fill_bounds(values: dict, filename: str, columns: tuple[str, ...]) -> None:
    """The "Fill the boxes" button: the typed ``lo:hi`` into every bound box (and the kept values); a typo is
    said."""
    text = state.widget_value(f"data_all_{filename}", "")
    try:
        dom = Domain.parse(text, names=columns[:1])
    except (TypeError, ValueError):
        values["_fill_error"] = f"Type the bounds as lo:hi, e.g. 0:1 or 18:90 (got {text!r})."
        return
    lo, hi = float(dom.lower[0]), float(dom.upper[0])
    for c in columns:
        for key, v in ((f"data_lo_{c}", lo), (f"data_hi_{c}", hi)):
            state.set_widget_value(key, v)
            values[key] = v


def _typed(values: dict, form: UploadForm, from_data: bool, cats_from_data: bool) -> UploadForm:
    """The form completed with what was chosen and typed."""
    return UploadForm(form.filename, columns=form.columns, text_columns=form.text_columns,
                      lower={c: values.get(f"data_lo_{c}") for c in form.numeric},
                      upper={c: values.get(f"data_hi_{c}") for c in form.numeric}, bounds_from_data=from_data,
                      categories={c: values.get(f"data_cat_{c}", "") for c in form.categorical},
                      other={c: values.get(f"data_other_{c}", "") for c in form.categorical},
                      categories_from_data=cats_from_data,
                      drop_missing=bool(values.get(f"data_drop_{form.filename}")), excluded=form.excluded)


def _use(form: UploadForm, raw: bytes, table) -> None:
    """"Use this data": the declared table becomes the dataset of every page, with what to know about it."""
    res = safe(form.use, raw, table, what="using the file")
    if res is None:
        return
    ds = res.dataset
    state.set_data(ds, Source("upload", ds.name, bounds_from_data=form.not_private))
    state.set_used_upload(ds, state.data_source())  # the whole table, for "Use the whole table again"
    state.flash("success", f"Using `{ds.name}`: {plural(ds.n, 'row')}, d = {ds.d}.")
    if (note := small_table_note(ds.n)) is not None:
        state.flash("warning", note)
    if res.dropped:
        state.flash("info", f"Left out {plural(res.dropped, 'row')} with a missing value in a column used.")
    if form.not_private:
        both = form.bounds_from_data and form.categories_from_data and form.categorical
        state.flash("warning", f"The {'bounds' if form.bounds_from_data else 'categories'}"
                               f"{' and categories' if both else ''} come from the data: no release of this dataset is "
                               "differentially private. Downloads are disabled.")
    if res.outside:
        state.flash("warning", f"{res.outside} rows have values outside the bounds you typed; every mechanism moves "
                               f"them onto the box's edge. ({OWNER})")
    st.rerun()

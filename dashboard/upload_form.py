"""The Data page's declaration of an upload's public domain, and its use.

The declaration (:func:`declare`) is a fragment: choosing the columns reruns only it, not the page. The
bounds, the whole-number columns and the categories are typed in a form with one submit, "Use this data" (or
"Save for later", which keeps what was typed without using it): typing reruns nothing. A domain file (the
JSON of "This table's public domain", of ``dpsynth synth --domain`` or a report's domain block, read by
:func:`dpsynth_core.domain_file.read_domain`) fills the form instead of typing it. Everything chosen and
typed is kept in the session (:func:`dashboard.state.upload_values`); what was typed in the form is kept once
a button of the form is pressed.

"Use this data" makes the table every page uses, with what to know about it: the library's clamping warning
when the bounds clamp rows (:func:`dpsynth_core.clamping.clamping`: one count and one decision for the
library, the command line and the dashboard -- the release goes ahead), and, owner view, the rows dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from dpsynth_core.domain import Domain
from dpsynth_core.domain_file import read_domain
from dpsynth_core.tabular import CSVError
from dpsynth_core.validation import plural

from . import state
from .compute import safe
from .controls import DROP_BAD_ROWS, DROP_MISSING, with_controls
from .data import Source
from .upload import UploadForm, form_values, small_table_note

__all__ = ["declare", "kept_widget", "checked", "drop_bad_rows_box", "owner_note", "OWNER_VIEW"]


def kept_widget(values: dict, widget: Callable, label: str, key: str, default: Any = None, *, arg: str = "value",
                **kwargs: Any) -> Any:
    """``widget`` drawn with the value kept in ``values`` (``default`` before anything was chosen), its value
    kept there again (copied on every run that draws it)."""
    values[key] = widget(label, key=key, **{arg: values.get(key, default)}, **kwargs)
    return values[key]


def checked(values: dict, key: str) -> bool:
    """Whether the box ``key`` is checked, read before the box is drawn (its kept value on a first run)."""
    return bool(state.widget_value(key, values.get(key, False)))


def drop_bad_rows_box(values: dict, filename: str) -> None:
    kept_widget(values, st.checkbox, DROP_BAD_ROWS, f"data_dropbad_{filename}", False,
                help="A cell that is not a number, an infinite value, or a value outside the declared categories "
                     "costs its row, not its column: the rows that hold one are left out (how many, and where, "
                     "is said to you only).")


#: The label of a count computed from the data without noise (rows dropped): for the owner's eyes only.
OWNER_VIEW = "(:material/lock: **owner view**: counted from your data, never part of a release or a download)"


def owner_note(note: str) -> None:
    """A count computed from the data without noise (rows dropped), labelled: the owner's eyes only."""
    st.caption(f"{note} {OWNER_VIEW}")


@st.fragment
def declare(filename: str, raw: bytes, table, shown: set[str]) -> None:
    """The columns to use and what the "NOT private" shortcuts take (a change reruns this fragment only), a domain
    file that fills the form, then the form of the bounds, the whole-number columns and the categories (one
    submit). ``shown``: the boxes that drop rows already drawn above ("missing", "bad")."""
    values = state.upload_values(filename)
    order = list(table.preview.columns)
    cols_key = f"data_cols_{filename}"
    if cols_key in values:  # a column no longer read (left out) cannot be chosen
        values[cols_key] = [c for c in values[cols_key] if c in order]
    _domain_file(values, filename, order, table.text_columns)
    picked = kept_widget(values, st.multiselect, "Columns to use", cols_key, list(table.numeric)[:2],
                         arg="default", options=order,
                         help="The columns the mechanisms see (in the file's order). A column holding text becomes "
                              "a categorical column with the categories you declare.")
    form = UploadForm(filename, columns=tuple(c for c in order if c in picked), text_columns=table.text_columns,
                      excluded=state.excluded_columns(filename))
    st.markdown("**Public bounds**: type the range each column can take *in principle* (an age in [0, 120], an income "
                "in [0, 10⁶]), not what this file happens to contain. Values outside are moved onto the box's edge.")
    from_data = kept_widget(values, st.checkbox, "Use the data's own range instead (NOT private: for exploration only)",
                            f"data_from_data_{filename}", False,
                            help="The smallest and largest values of your data leak information about the people at "
                                 "the extremes: with this box no release is differentially private, and downloads are "
                                 "disabled.")
    cats_from_data = False
    if form.categorical:
        cats_from_data = kept_widget(values, st.checkbox, "Use the values in this file as the categories — NOT "
                                     "private, for exploration only", f"data_cats_from_data_{filename}", False,
                                     help="The values present in your file are themselves private: with them no "
                                          "release of this dataset is differentially private (its label and exports "
                                          "say so), and downloads are disabled.")
        if "missing" not in shown:
            kept_widget(values, st.checkbox, DROP_MISSING, f"data_drop_{filename}", False,
                        help="Rows with an empty or NA cell in a column used are left out (how many is said).")
    if "bad" not in shown:
        drop_bad_rows_box(values, filename)
    with st.form(f"data_form_{filename}", border=False, enter_to_submit=False):
        _declaration_boxes(values, filename, form, from_data, cats_from_data)
        a, b = st.columns([1, 4], vertical_alignment="center")
        use = a.form_submit_button("Use this data", type="primary", key="data_use_upload")
        b.form_submit_button("Save for later", key="data_save_upload",
                             help="Keeps what you typed in this session's memory (with the file), without using it.")
    form = _typed(values, form, from_data, cats_from_data)
    if use:
        _use(form, raw, table)


def _domain_file(values: dict, filename: str, order: list[str], text_columns) -> None:
    """The uploader of a domain file that fills the form (:func:`_fill_from_domain`), with what it did."""
    st.file_uploader("Fill the form from a domain file (JSON, optional)", type=["json"],
                     key=f"data_domain_file_{filename}", on_change=_fill_from_domain,
                     args=(values, filename, tuple(order), tuple(text_columns)),
                     help="A domain file downloaded from this dashboard (\"This table's public domain\"), the one "
                          "you give dpsynth synth --domain, or a report of a release (its domain block): the columns, "
                          "bounds, categories and whole-number columns it declares fill the form below.")
    if "_domain_error" in values:
        st.error(values.pop("_domain_error"))
    if "_domain_filled" in values:
        st.caption(values.pop("_domain_filled"))


def _fill_from_domain(values: dict, filename: str, order: tuple[str, ...], text_columns: tuple[str, ...]) -> None:
    """A domain file was given: its declaration into every box of the form (and the kept values); a file that
    cannot be read, or does not fit this file, is said in its own words."""
    upl = state.widget_value(f"data_domain_file_{filename}")
    if upl is None:
        return
    try:
        filled = form_values(read_domain(upl.getvalue(), what=f"the domain file {upl.name!r}"), filename, order,
                             text_columns)
    except (ValueError, TypeError) as exc:
        values["_domain_error"] = str(exc)
        return
    for key, value in filled.items():
        if not key.startswith("_"):
            state.set_widget_value(key, value)
        values[key] = value
    values["_domain_filled"] = (f"Filled from `{upl.name}`: the columns, bounds and categories it declares. Check "
                                "them, then press *Use this data*.")


def _declaration_boxes(values: dict, filename: str, form: UploadForm, from_data: bool, cats_from_data: bool) -> None:
    """The form's boxes: the bounds of the numeric columns (one range for all of them, typed once, when there are
    three or more), the whole-number columns, and the categories of the categorical ones, with an optional
    'other' category."""
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
        kept_widget(values, a.number_input, f"lower bound of {c}", f"data_lo_{c}", format="%.6g",
                    placeholder="type it")
        kept_widget(values, b.number_input, f"upper bound of {c}", f"data_hi_{c}", format="%.6g",
                    placeholder="type it")
    if numeric:
        ints = f"data_int_{filename}"
        values[ints] = [c for c in values.get(ints, []) if c in numeric]  # the columns still used
        kept_widget(values, st.multiselect, "Whole-number columns (counts, ages in years)", ints, [], arg="default",
                    options=numeric, help="Declared like the bounds, never read off the data: every release rounds "
                                          "these columns to whole numbers inside their bounds, so a count never comes "
                                          "out as 3.716. Each needs a whole number between its bounds.")
    if form.categorical and not cats_from_data:
        st.markdown("**Public categories**: type every value each text column can take *in principle* (the choices "
                    "of the form it comes from), one per line or separated by `|` (`F|M`), not the values this file "
                    "happens to contain: one rare value can reveal one person. A value outside them is refused with "
                    "its row, unless you name an *other* category for it.")
        for c in form.categorical:
            a, b = st.columns([3, 1])
            kept_widget(values, a.text_area, f"categories of {c}", f"data_cat_{c}", "", height=90,
                        placeholder="one per line, or a|b|c")
            kept_widget(values, b.text_input, f"'other' category of {c} (optional)", f"data_other_{c}", "",
                        placeholder="e.g. other",
                        help="Values outside the list go to this category instead of being refused (it is added to "
                             "the list).")
    weights = {c: w for c, w in values.get("_weights", {}).items() if c in form.categorical and w != 1.0}
    if weights:
        st.caption("Category weights from the domain file, kept as they are: "
                   + ", ".join(f"{c} {w:g}" for c, w in weights.items()) + ".")


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
    fn = form.filename
    return UploadForm(fn, columns=form.columns, text_columns=form.text_columns,
                      lower={c: values.get(f"data_lo_{c}") for c in form.numeric},
                      upper={c: values.get(f"data_hi_{c}") for c in form.numeric}, bounds_from_data=from_data,
                      categories={c: values.get(f"data_cat_{c}", "") for c in form.categorical},
                      other={c: values.get(f"data_other_{c}", "") for c in form.categorical},
                      categories_from_data=cats_from_data, drop_missing=bool(values.get(f"data_drop_{fn}")),
                      excluded=form.excluded, drop_bad_rows=bool(values.get(f"data_dropbad_{fn}")),
                      integers=tuple(values.get(f"data_int_{fn}", ())), weights=dict(values.get("_weights", {})))


def _use(form: UploadForm, raw: bytes, table) -> None:
    """"Use this data": the declared table becomes the dataset of every page, with what to know about it."""
    def read():
        try:
            return form.use(raw, table)
        except CSVError as exc:  # the reader's refusal, its advice named as this page's boxes
            raise ValueError(with_controls(str(exc), exc.advice)) from None

    res = safe(read, what="using the file")
    if res is None:
        return
    ds = res.dataset
    state.set_data(ds, Source("upload", ds.name, bounds_from_data=form.not_private))
    state.set_used_upload(ds, state.data_source())  # the whole table, for "Use the whole table again"
    state.flash("success", f"Using `{ds.name}`: {plural(ds.n, 'row')}, d = {ds.d}.")
    if (note := small_table_note(ds.n)) is not None:
        state.flash("warning", note)
    if res.dropped:
        state.flash("info", f"Left out {plural(res.dropped, 'row')} with a missing value in a column used. {OWNER_VIEW}")
    if res.bad_note:
        state.flash("info", f"{res.bad_note} {OWNER_VIEW}")
    if form.not_private:
        both = form.bounds_from_data and form.categories_from_data and form.categorical
        state.flash("warning", f"The {'bounds' if form.bounds_from_data else 'categories'}"
                               f"{' and categories' if both else ''} come from the data: no release of this dataset is "
                               "differentially private. Downloads are disabled.")
    # bounds that clamp rows: the library's warning is shown with the table in use (dashboard.data_view), where it
    # stays while the table does; the release goes ahead
    st.rerun()

"""The Data page's upload: the file kept in the session, the reader's refusals with the offer to drop rows or
leave a column out, and the preview; the declaration of the public domain is :mod:`dashboard.upload_form`'s.

A cell that is not a number, an infinite value or (once the categories are declared) a value outside them
costs its row, not its column: the box "Drop the rows with bad cells" reads the file with the reader's
``drop_bad_rows``, and the reader's note says how many rows were dropped and where -- an owner view, shown
labelled, kept out of every release and download. Everything chosen and typed is kept in the session
(:func:`dashboard.state.upload_values`) and comes back after a visit to another page.
"""

from __future__ import annotations

import streamlit as st

from dpsynth_core.tabular import CSVError

from . import state
from .controls import DROP_MISSING, with_controls
from .upload import MAX_UPLOAD_BYTES, MAX_UPLOAD_COLUMNS, MAX_UPLOAD_ROWS, read_upload
from .upload_form import checked, declare, drop_bad_rows_box, kept_widget, owner_note

__all__ = ["upload_section"]


@st.cache_data(show_spinner=False, max_entries=4)
def _read(data: bytes, filename: str, missing: str, exclude: tuple = (), drop_bad_rows: bool = False):
    """The uploaded file as a preview shows it (the library's text-preview mode), cached on its bytes."""
    return read_upload(data, filename, missing=missing, exclude=exclude, keep_text=True, drop_bad_rows=drop_bad_rows)


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
        table, shown = _preview(filename, raw, values)
        if table is not None:
            declare(filename, raw, table, shown)


def _upload_changed() -> None:
    """The uploader changed: emptied by the user (its ×), the kept file is forgotten; a new file replaces it
    (on the run)."""
    if state.widget_value("data_upload") is None:
        state.forget_file()


def _leave_out(filename: str, column: str) -> None:
    """The box "Leave out the column" of ``column`` changed: add it to (or take it from) the columns left out."""
    rest = [c for c in state.excluded_columns(filename) if c != column]
    state.set_excluded_columns(filename, tuple(rest + ([column] if state.widget_value(
        f"data_skip_{filename}_{column}") else [])))


def _leave_out_box(values: dict, filename: str, column: str) -> None:
    kept_widget(values, st.checkbox, f"Leave out the column {column!r} and read the rest",
                f"data_skip_{filename}_{column}", False, on_change=_leave_out, args=(filename, column))


def _refused(exc: CSVError, values: dict, filename: str, skipped: tuple) -> set[str]:
    """The reader's refusal, its advice named as this page's boxes, and the boxes: drop the rows with a missing
    value, drop the rows with a bad cell, leave the column out. Returns the boxes drawn ("missing", "bad")."""
    st.error(with_controls(str(exc), exc.advice))
    shown = set()
    if exc.kind == "missing":
        kept_widget(values, st.checkbox, DROP_MISSING, f"data_drop_{filename}", False,
                    help=f"Leaves out the {exc.count:,} rows with an empty or NA cell (how many is said)."
                    if exc.count else None)
        shown.add("missing")
    if any(a.param == "drop_bad_rows" for a in exc.advice):
        drop_bad_rows_box(values, filename)
        shown.add("bad")
    if exc.kind in ("not_a_number", "decimal", "infinite") and exc.column and exc.column not in skipped:
        _leave_out_box(values, filename, exc.column)
    return shown


def _preview(filename: str, raw: bytes, values: dict):
    """Read the file (the library's rules); on a refusal, the error and what can be done about it (drop the rows
    with a missing value or a bad cell, leave a column out); then the preview. Returns (the table or None, the
    boxes that drop rows already on screen: "missing", "bad")."""
    drop, bad = checked(values, f"data_drop_{filename}"), checked(values, f"data_dropbad_{filename}")
    skipped = tuple(c for c in state.excluded_columns(filename) if checked(values, f"data_skip_{filename}_{c}"))
    state.set_excluded_columns(filename, skipped)  # the columns left out: those whose box is still checked
    table, shown = None, set()
    try:
        table = _read(raw, filename, "drop" if drop else "error", skipped, bad)
    except CSVError as exc:
        shown = _refused(exc, values, filename, skipped)
    except (ValueError, TypeError) as exc:
        st.error(str(exc))
    if skipped:  # keep the choices on screen (and their state alive) so that each can be undone
        st.caption(f"Left out as you asked: {', '.join(repr(c) for c in skipped)} (uncheck a box to read its column "
                   "again).")
    for c in skipped:
        _leave_out_box(values, filename, c)
    if table is None:
        return None, shown
    if drop and "missing" not in shown:  # keep the choice on screen (and its state alive) so that it can be undone
        kept_widget(values, st.checkbox, DROP_MISSING, f"data_drop_{filename}", False)
        shown.add("missing")
    if bad and "bad" not in shown:
        drop_bad_rows_box(values, filename)
        shown.add("bad")
    for note in table.notes:
        if note.topic == "bad_rows":  # an owner view: how many rows, and where
            owner_note(note)
        elif note.topic != "excluded":  # said above, with the boxes
            st.caption(note)
    if table.text_columns:
        st.caption(f"Columns holding text: {', '.join(repr(c) for c in table.text_columns)}. Add them to *Columns to "
                   "use* to use them as categorical columns, with the categories you declare below.")
    st.caption("First rows (:material/lock: your private data, shown to you only):")
    st.dataframe(table.preview.head(10), hide_index=True)
    return table, shown

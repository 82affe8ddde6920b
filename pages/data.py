"""Data: generators with their parameters, bundled real data, a bundled mixed table, CSV upload with typed
public bounds and categories."""

import pandas as pd
import streamlit as st

from dashboard import data as sources
from dashboard import ui as _ui
from dpsynth_core import Domain, viz
from dpsynth_core.datasets import GENERATORS
from dpsynth_core.tabular import CSVError
from dpsynth_core.validation import plural

_ui.require_app(__file__)


@st.cache_data(show_spinner=False, max_entries=16)
def _generate(name: str, params: tuple):
    return sources.generate(name, dict(params))


@st.cache_data(show_spinner=False, max_entries=8)
def _real(name: str):
    return sources.real(name)


@st.cache_data(show_spinner=False, max_entries=4)
def _mixed(name: str):
    return sources.mixed(name)


@st.cache_data(show_spinner=False, max_entries=4)
def _read(data: bytes, filename: str, missing: str, exclude: tuple = ()):
    return sources.read_upload(data, filename, missing=missing, exclude=exclude)


@st.cache_data(show_spinner=False, max_entries=4)
def _with_text(data: bytes, filename: str, missing: str, text_columns: tuple, read_missing: str, exclude: tuple = ()):
    """The uploaded table with its text columns (``missing``: "keep" for the preview)."""
    return sources.read_upload_text(data, sources.read_upload(data, filename, missing=read_missing, exclude=exclude),
                                    list(text_columns), missing=missing)


def _leave_out(filename: str, column: str) -> None:
    """The box "Leave out the column" of ``column`` changed: add it to (or take it from) the columns of the
    upload ``filename`` left out (session state ``data_skipped_<file>``, in the order they were left out)."""
    key = f"data_skipped_{filename}"
    rest = [c for c in st.session_state.get(key, ()) if c != column]
    st.session_state[key] = tuple(rest + ([column] if st.session_state.get(f"data_skip_{filename}_{column}") else []))


def _form(filename: str) -> dict:
    """What the user chose and typed for the upload ``filename`` ({widget key: value}), kept in the session's
    own state: Streamlit forgets a widget's state on a run that does not draw it (another page's run), and
    the work on an upload is never lost. The forms of the last few files are kept (a file uploaded again
    gets its values back)."""
    forms = st.session_state.setdefault("data_forms", {})
    form = forms.pop(filename, {})
    forms[filename] = form
    while len(forms) > 4:
        forms.pop(next(iter(forms)))
    return form


def _kept(form: dict, widget, label: str, key: str, default=None, *, arg: str = "value", **kwargs):
    """``widget`` drawn with the value kept in ``form`` (``default`` before anything was chosen), its value
    kept there again (copied on every run that draws it)."""
    form[key] = widget(label, key=key, **{arg: form.get(key, default)}, **kwargs)
    return form[key]


def _checked(form: dict, key: str) -> bool:
    """Whether the box ``key`` is checked, read before the box is drawn (its kept value on a first run)."""
    return bool(st.session_state.get(key, form.get(key, False)))


def _forget_upload() -> None:
    """Forget the file kept in the session's memory and what was typed for it (the user cleared or forgot it;
    a table already in use stays in use)."""
    kept = st.session_state.pop("data_kept_file", None)
    if kept is not None:
        st.session_state.get("data_forms", {}).pop(kept[0], None)


def _fill_bounds(form: dict, filename: str, columns: tuple[str, ...]) -> None:
    """The "Fill the boxes" button: the typed ``lo:hi`` into every bound box (and the kept form); a typo is said."""
    text = st.session_state.get(f"data_all_{filename}", "")
    try:
        dom = Domain.parse(text, names=columns[:1])
    except (TypeError, ValueError):
        _ui.flash("error", f"Type the bounds as lo:hi, e.g. 0:1 or 18:90 (got {text!r}).")
        return
    lo, hi = float(dom.lower[0]), float(dom.upper[0])
    for c in columns:
        for key, v in ((f"data_lo_{c}", lo), (f"data_hi_{c}", hi)):
            st.session_state[key] = v
            form[key] = v


def _upload_changed() -> None:
    """The uploader changed: emptied by the user (its ×), the kept file is forgotten; a new file replaces it
    (below, on the run)."""
    if st.session_state.get("data_upload") is None:
        _forget_upload()


MIXED_SOURCE = "Clinic (mixed)"


def _domain_rows(dom):
    """(column, lower, upper) in the domain's order; categorical columns have no bounds (None)."""
    bounds = dict(zip(dom.numeric_names, zip(dom.lower, dom.upper, strict=True), strict=True))
    return [(c, *bounds.get(c, (None, None))) for c in dom.names]


_ui.page_intro("data")
_ui.lesson_box("data")
whole = st.session_state.get("data_used_upload")  # (dataset, source): the uploaded table last used, whole
if whole is not None and whole[0] is not _ui.data():
    if st.button(f"Use the whole table {whole[0].name} again", key="data_whole_upload", icon=":material/table:",
                 help="The table you uploaded and used, as you used it: every column chosen, with the bounds and "
                      "categories you declared (kept in this session's memory only)."):
        _ui.set_data(*whole)
        _ui.flash("success", f"Using `{whole[0].name}` again: {plural(whole[0].n, 'row')}, d = {whole[0].d}.")
        st.rerun()
source = st.radio("Source", ["Generator", "Real dataset", MIXED_SOURCE, "Upload CSV"], horizontal=True,
                  key="data_source", persist_state="session",
                  help="Clinic (mixed): a generated health-like table with numbers and categories (sex, region, "
                       "diabetes), its public bounds and categories declared as on a clinical form.")

if source == "Generator":
    gen = st.selectbox("Generator", list(GENERATORS), key="data_gen", persist_state="session")
    defaults = {p.name: p.default for p in GENERATORS[gen][1]}
    values = _ui.schema_controls(GENERATORS[gen][1], f"gen__{gen}")
    if st.button("Generate", type="primary", key="data_generate"):
        ds = _ui.safe(_generate, gen, tuple(sorted(values.items())), what="generating data")
        if ds is not None:
            _ui.set_data(ds, sources.Source("generator", gen, {} if values == defaults else dict(values)))
            _ui.flash("success", f"Using `{ds.name}`: {ds.n} points in d = {ds.d}.")
            st.rerun()

elif source == "Real dataset":
    which = st.selectbox("Dataset", sources.real_names(), key="data_real", persist_state="session")
    if st.button("Load", type="primary", key="data_load"):
        ds = _ui.safe(_real, which, what="loading the dataset")
        if ds is not None:
            _ui.set_data(ds, sources.Source("real", which))
            _ui.flash("success", f"Using `{ds.name}`: {ds.n} points in d = {ds.d}.")
            st.rerun()

elif source == MIXED_SOURCE:
    names = sources.mixed_names()
    which = st.selectbox("Table", names, key="data_mixed", persist_state="session") if len(names) > 1 else names[0]
    ds = _ui.safe(_mixed, which, what="loading the table")
    if ds is not None:
        st.caption(ds.description)
        dom = ds.domain
        st.markdown("**Declared before looking at the data** (public): "
                    + "; ".join(f"{c} ∈ {{{', '.join(dom.categories[c])}}}" if c in dom.categories else
                                f"{c} ∈ [{lo:g}, {hi:g}]" for c, lo, hi in _domain_rows(dom)) + ".")
        if st.button("Load", type="primary", key="data_load_mixed"):
            _ui.set_data(ds, sources.Source("mixed", which))
            _ui.flash("success", f"Using `{ds.name}`: {plural(ds.n, 'row')}, {dom.k} numeric and {dom.d - dom.k} categorical "
                                 "columns.")
            st.rerun()

else:
    st.caption(f"A CSV file with a header row; at most {sources.MAX_UPLOAD_ROWS:,} rows and "
               f"{sources.MAX_UPLOAD_COLUMNS} columns. The file stays in memory: it is never written to disk.")
    up = st.file_uploader("CSV file", type=["csv", "txt"], key="data_upload", on_change=_upload_changed)
    kept = st.session_state.get("data_kept_file")  # (name, bytes): the file worked on, kept across pages
    if up is not None:  # it replaces the kept one (a file above the cap is refused by the reader, never kept)
        kept = (up.name, up.getvalue())
        if up.size <= sources.MAX_UPLOAD_BYTES:
            st.session_state["data_kept_file"] = kept
        else:
            _forget_upload()
    if up is None and kept is not None:
        a, b = st.columns([4, 1], vertical_alignment="center")
        a.caption(f"Still working on `{kept[0]}`, kept in this session's memory with what you typed (never written "
                  "to disk). Upload another file to replace it.")
        b.button("Forget this file", key="data_forget_upload", on_click=_forget_upload)
    if kept is not None:
        filename, raw = kept
        form = _form(filename)
        drop_key = f"data_drop_{filename}"
        drop = _checked(form, drop_key)
        skip_key = f"data_skipped_{filename}"
        # the columns left out: those whose box is still checked
        skipped = tuple(c for c in st.session_state.get(skip_key, ()) if _checked(form, f"data_skip_{filename}_{c}"))
        st.session_state[skip_key] = skipped
        table = None
        drop_shown = False
        try:
            table = _read(raw, filename, "drop" if drop else "error", skipped)
        except CSVError as exc:
            st.error(str(exc))
            if exc.kind == "missing":
                offer = ("Drop the row with a missing value" if exc.count == 1 else
                         f"Drop the {plural(exc.count, 'row')} with missing values")
                _kept(form, st.checkbox, offer, drop_key, False)
                drop_shown = True
            if exc.kind in ("not_a_number", "decimal", "infinite") and exc.column and exc.column not in skipped:
                _kept(form, st.checkbox, f"Leave out the column {exc.column!r} and read the rest",
                      f"data_skip_{filename}_{exc.column}", False, on_change=_leave_out, args=(filename, exc.column))
        except (ValueError, TypeError) as exc:
            st.error(str(exc))
        if skipped:  # keep the choices on screen (and their state alive) so that each can be undone
            st.caption(f"Left out as you asked: {', '.join(repr(c) for c in skipped)} (uncheck a box to read "
                       "its column again).")
            for c in skipped:
                _kept(form, st.checkbox, f"Leave out the column {c!r} and read the rest",
                      f"data_skip_{filename}_{c}", False, on_change=_leave_out, args=(filename, c))
        if table is not None:
            df = table.frame
            if drop:  # keep the choice on screen (and its state alive) so that it can be undone
                _kept(form, st.checkbox, "Drop the rows with missing values", drop_key, False)
                drop_shown = True
            texts = list(table.text_columns)
            for note in table.notes:
                if note.topic not in ("text", "excluded"):  # said on this page, with the boxes and the columns
                    st.caption(note)
            if texts:
                st.caption(f"Columns holding text: {', '.join(repr(c) for c in texts)}. Add them to *Columns to use* "
                           "to use them as categorical columns, with the categories you declare below.")
            preview = df
            if texts:
                preview = _ui.safe(_with_text, raw, filename, "keep", tuple(texts),
                                   "drop" if drop else "error", skipped, what="reading the text columns")
                preview = df if preview is None else preview
            st.caption("First rows (:material/lock: your private data, shown to you only):")
            st.dataframe(preview.head(10), hide_index=True)
            order = list(preview.columns) if set(texts) <= set(preview.columns) else list(df.columns) + texts
            cols_key = f"data_cols_{filename}"
            if cols_key in form:  # a column no longer read (left out) cannot be chosen
                form[cols_key] = [c for c in form[cols_key] if c in order]
            picked = _kept(form, st.multiselect, "Columns to use", cols_key, list(df.columns)[:2], arg="default",
                           options=order,
                           help="The columns the mechanisms see (in the file's order). A column holding text "
                                "becomes a categorical column with the categories you declare.")
            chosen = [c for c in order if c in picked]
            numeric = [c for c in chosen if c not in texts]
            categorical = [c for c in chosen if c in texts]
            st.markdown("**Public bounds**: type the range each column can take *in principle* (an age in [0, 120], "
                        "an income in [0, 10⁶]), not what this file happens to contain. Values outside are moved onto "
                        "the box's edge.")
            from_data = _kept(form, st.checkbox, "Use the data's own range instead (NOT private: for exploration only)",
                              f"data_from_data_{filename}", False,
                              help="The smallest and largest values of your data leak information about "
                                   "the people at the extremes: with this box no release is differentially "
                                   "private, and downloads are disabled.")
            lows, highs = [], []
            if not from_data and len(numeric) >= 3:  # many columns: one range typed once, each box still editable
                a, b = st.columns([3, 1], vertical_alignment="bottom")
                a.text_input("The same bounds for every numeric column (lo:hi)", key=f"data_all_{filename}",
                             placeholder="e.g. 0:1", help="Fills every lower and upper bound box below; change any "
                                                          "of them afterwards. Public knowledge, as every bound.")
                b.button("Fill the boxes", key=f"data_fill_{filename}", on_click=_fill_bounds,
                         args=(form, filename, tuple(numeric)))
            if not from_data:
                for c in numeric:
                    a, b = st.columns(2)
                    lows.append(_kept(form, a.number_input, f"lower bound of {c}", f"data_lo_{c}", format="%.6g",
                                      placeholder="type it"))
                    highs.append(_kept(form, b.number_input, f"upper bound of {c}", f"data_hi_{c}", format="%.6g",
                                       placeholder="type it"))
            typed, other, cats_from_data = {}, {}, False
            if categorical:
                st.markdown("**Public categories**: type every value each text column can take *in principle* (the "
                            "choices of the form it comes from), one per line or separated by `|` (`F|M`), not the "
                            "values this file happens to contain: one rare value can reveal one person. A value "
                            "outside them is refused with its row, unless you name an *other* category for it.")
                cats_from_data = _kept(form, st.checkbox, "Use the values in this file as the categories — NOT "
                                       "private, for exploration only", f"data_cats_from_data_{filename}", False,
                                       help="The values present in your file are themselves private: with them "
                                            "no release of this dataset is differentially private (its label "
                                            "and exports say so), and downloads are disabled.")
                for c in categorical:
                    if cats_from_data:
                        break
                    a, b = st.columns([3, 1])
                    typed[c] = _kept(form, a.text_area, f"categories of {c}", f"data_cat_{c}", "", height=90,
                                     placeholder="one per line, or a|b|c")
                    other[c] = _kept(form, b.text_input, f"'other' category of {c} (optional)", f"data_other_{c}", "",
                                     placeholder="e.g. other",
                                     help="Values outside the list go to this category instead of being "
                                          "refused (it is added to the list).")
                if not drop_shown:
                    _kept(form, st.checkbox, "Drop the rows with missing values", drop_key, False,
                          help="Rows with an empty or NA cell in a column used are left out (how many is said).")
            if st.button("Use this data", type="primary", key="data_use_upload"):
                frame = df
                if categorical:
                    frame = _ui.safe(_with_text, raw, filename, "drop" if drop else "error",
                                     tuple(categorical), "drop" if drop else "error", skipped,
                                     what="reading the text columns")
                res = None if frame is None else _ui.safe(
                    sources.upload_dataset, frame, chosen, lows or [None] * len(numeric),
                    highs or [None] * len(numeric), filename, from_data=from_data,
                    categories=typed if not cats_from_data else {c: "" for c in categorical},
                    categories_from_data=cats_from_data, other=other, what="using the file")
                if res is not None:
                    ds, outside = res
                    not_private = from_data or (cats_from_data and bool(categorical))
                    _ui.set_data(ds, sources.Source("upload", ds.name, bounds_from_data=not_private))
                    # the whole table, kept so that the page can bring it back (after its numeric columns only)
                    st.session_state["data_used_upload"] = (ds, st.session_state["dataset_source"])
                    _ui.flash("success", f"Using `{ds.name}`: {plural(ds.n, 'row')}, d = {ds.d}.")
                    if (note := sources.small_table_note(ds.n)) is not None:
                        _ui.flash("warning", note)
                    if len(frame) < len(df):
                        _ui.flash("info", f"Left out {plural(len(df) - len(frame), 'row')} with a missing value in a text "
                                         "column.")
                    if not_private:
                        _ui.flash("warning", f"The {'bounds' if from_data else 'categories'}"
                                             f"{' and categories' if from_data and cats_from_data and categorical else ''}"
                                             " come from the data: no release of this dataset is differentially "
                                             "private. Downloads are disabled.")
                    if outside:
                        _ui.flash("warning", f"{outside} rows have values outside the bounds you typed; every "
                                             f"mechanism moves them onto the box's edge. ({_ui.OWNER})")
                    st.rerun()

if st.button("Reset to the default dataset", key="data_reset"):
    _ui.set_data(*sources.default())
    _ui.flash("info", "Back to the default dataset.")
    st.rerun()

st.divider()
d = _ui.data()
dom = d.domain
X_num, num_names = d.numeric_part()
st.subheader(f"Current dataset: `{d.name}`")
st.caption(d.description)
if not dom.declared:
    st.warning("The domain of this dataset was read off the data: NOT private. No release of it is differentially "
               "private; declare the bounds and categories to make it private.")
table = d.to_frame()
c1, c2 = st.columns([2, 1])
axes = (0, 1)
if len(num_names) > 2:
    a0 = c2.selectbox("x axis", list(num_names), index=0, key="data_ax0", persist_state="session")
    a1 = c2.selectbox("y axis", list(num_names), index=1, key="data_ax1", persist_state="session")
    axes = (list(num_names).index(a0), list(num_names).index(a1))
labels, label_title = d.labels, "label"
if dom.is_mixed:
    by = c2.selectbox("Colour by", ["—"] + list(dom.categories), index=1, key="data_colour", persist_state="session",
                      help="Colour the rows by a categorical column.")
    if by in dom.categories:
        labels, label_title = table[by].astype(str).to_numpy(), by
with c1:
    _ui.plot(viz.scatter_data(X_num, num_names, labels=labels, lower=dom.lower, upper=dom.upper, axes=axes,
                              label_title=label_title),
             "Your data (:material/lock: owner view), two coordinates at a time; the dotted box is the public domain."
             + (" Numeric columns only; the categories colour the rows and are counted below." if dom.is_mixed
                else ""), key="data_scatter")
with c2:
    if dom.is_mixed:
        st.dataframe(pd.DataFrame([{"column": c, "kind": "categorical" if c in dom.categories else "numeric",
                                    "public domain": "{" + ", ".join(dom.categories[c]) + "}" if c in dom.categories
                                    else f"[{lo:g}, {hi:g}]"} for c, lo, hi in _domain_rows(dom)]), hide_index=True)
    else:
        st.dataframe(pd.DataFrame({"column": dom.names, "lower (public)": dom.lower,
                                   "upper (public)": dom.upper}), hide_index=True)
    st.metric("rows (owner view)", d.n)
    st.metric("columns d" if dom.is_mixed else "dimension d", d.d)
    if dom.is_mixed:
        st.caption(f"{dom.k} numeric, {d.d - dom.k} categorical.")
if dom.is_mixed:
    _ui.plot(viz.category_counts(table, None, dom.categories, title="rows per category"),
             "Every declared category has its bar, also one nobody is in (:material/lock: owner view: true counts).",
             key="data_categories")
st.dataframe(table.head(20), hide_index=True)
st.caption("First 20 rows (:material/lock: owner view).")
_ui.lesson_nav("data")

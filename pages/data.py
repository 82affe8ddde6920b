"""Data: generators with their parameters, bundled real data, CSV upload with typed public bounds."""

import pandas as pd
import streamlit as st

from dashboard import data as sources
from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.datasets import GENERATORS
from dpsynth_core.tabular import CSVError

_ui.require_app(__file__)


@st.cache_data(show_spinner=False, max_entries=16)
def _generate(name: str, params: tuple):
    return sources.generate(name, dict(params))


@st.cache_data(show_spinner=False, max_entries=8)
def _real(name: str):
    return sources.real(name)


@st.cache_data(show_spinner=False, max_entries=4)
def _read(data: bytes, filename: str, missing: str):
    return sources.read_upload(data, filename, missing=missing)


_ui.page_intro("data")
_ui.lesson_box("data")
_ui.show_flash()
source = st.radio("Source", ["Generator", "Real dataset", "Upload CSV"], horizontal=True, key="data_source",
                  persist_state="session")

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

else:
    st.caption(f"A CSV file with a header row; at most {sources.MAX_UPLOAD_ROWS:,} rows and "
               f"{sources.MAX_UPLOAD_COLUMNS} columns. The file stays in memory: it is never written to disk.")
    up = st.file_uploader("CSV file", type=["csv", "txt"], key="data_upload")
    if up is not None:
        drop = st.session_state.get(f"data_drop_{up.name}", False)
        table = None
        try:
            table = _read(up.getvalue(), up.name, "drop" if drop else "error")
        except CSVError as exc:
            st.error(str(exc))
            if exc.kind == "missing":
                st.checkbox(f"Drop the {exc.count} rows with missing values", key=f"data_drop_{up.name}")
        except (ValueError, TypeError) as exc:
            st.error(str(exc))
        if table is not None:
            df = table.frame
            if drop:  # keep the choice on screen (and its state alive) so that it can be undone
                st.checkbox("Drop the rows with missing values", key=f"data_drop_{up.name}")
            for note in table.notes:
                st.caption(note)
            st.caption("First rows (:material/lock: your private data, shown to you only):")
            st.dataframe(df.head(10), hide_index=True)
            chosen = st.multiselect("Columns to use", list(df.columns), default=list(df.columns)[:2],
                                    key=f"data_cols_{up.name}", help="The columns the mechanisms see.")
            st.markdown("**Public bounds**: type the range each column can take *in principle* (an age in [0, 120], "
                        "an income in [0, 10⁶]), not what this file happens to contain. Values outside are moved onto "
                        "the box's edge.")
            from_data = st.checkbox("Use the data's own range instead (NOT private: for exploration only)",
                                    key=f"data_from_data_{up.name}",
                                    help="The smallest and largest values of your data leak information about "
                                         "the people at the extremes: with this box no release is differentially "
                                         "private, and downloads are disabled.")
            lows, highs = [], []
            if not from_data:
                for c in chosen:
                    a, b = st.columns(2)
                    lows.append(a.number_input(f"lower bound of {c}", value=None, key=f"data_lo_{c}", format="%.6g",
                                               placeholder="type it"))
                    highs.append(b.number_input(f"upper bound of {c}", value=None, key=f"data_hi_{c}",
                                                format="%.6g", placeholder="type it"))
            if st.button("Use this data", type="primary", key="data_use_upload"):
                res = _ui.safe(sources.upload_dataset, df, chosen, lows or [None] * len(chosen),
                               highs or [None] * len(chosen), up.name, from_data=from_data, what="using the file")
                if res is not None:
                    ds, outside = res
                    _ui.set_data(ds, sources.Source("upload", ds.name, bounds_from_data=from_data))
                    _ui.flash("success", f"Using `{ds.name}`: {ds.n} rows, d = {ds.d}.")
                    if from_data:
                        _ui.flash("warning", "The bounds come from the data: no release of this dataset is "
                                             "differentially private. Downloads are disabled.")
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
st.subheader(f"Current dataset: `{d.name}`")
st.caption(d.description)
c1, c2 = st.columns([2, 1])
axes = (0, 1)
if d.d > 2:
    a0 = c2.selectbox("x axis", list(d.domain.names), index=0, key="data_ax0", persist_state="session")
    a1 = c2.selectbox("y axis", list(d.domain.names), index=1, key="data_ax1", persist_state="session")
    axes = (list(d.domain.names).index(a0), list(d.domain.names).index(a1))
with c1:
    _ui.plot(viz.scatter_data(d.X, d.domain.names, labels=d.labels, lower=d.domain.lower, upper=d.domain.upper,
                              axes=axes),
             "Your data (:material/lock: owner view), two coordinates at a time; the dotted box is the public domain.",
             key="data_scatter")
with c2:
    st.dataframe(pd.DataFrame({"column": d.domain.names, "lower (public)": d.domain.lower,
                               "upper (public)": d.domain.upper}), hide_index=True)
    st.metric("rows (owner view)", d.n)
    st.metric("dimension d", d.d)
st.dataframe(pd.DataFrame(d.X[:20], columns=list(d.domain.names)), hide_index=True)
st.caption("First 20 rows (:material/lock: owner view).")
_ui.lesson_nav("data")

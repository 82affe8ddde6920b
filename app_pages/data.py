"""Data: generators with their parameters, bundled real data, a bundled mixed table, CSV upload with typed
public bounds and categories."""

import streamlit as st

from dashboard import data_view as view
from dashboard import ui as _ui
from dashboard.upload_view import upload_section

MIXED_SOURCE = "Clinic (mixed)"

_ui.page_intro("data")
_ui.lesson_box("data")
view.whole_upload_offer()
source = st.radio("Source", ["Generator", "Real dataset", MIXED_SOURCE, "Upload CSV"], horizontal=True,
                  key="data_source", persist_state="session",
                  help="Clinic (mixed): a generated health-like table with numbers and categories (sex, region, "
                       "diabetes), its public bounds and categories declared as on a clinical form.")
if source == "Generator":
    view.generator_section()
elif source == "Real dataset":
    view.real_section()
elif source == MIXED_SOURCE:
    view.mixed_section()
else:
    upload_section()  # read with the library's rules, then bounds and categories declared in one form
view.reset_button()

st.divider()
view.current_dataset()
view.auto_choice()
_ui.lesson_nav("data")

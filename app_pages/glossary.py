"""Glossary and papers: the words of the lessons (docs/glossary.md) and the papers behind the mechanisms."""

from pathlib import Path

import streamlit as st

from dashboard import ui as _ui
from dashboard.lessons import PAPERS


@st.cache_data(show_spinner=False)
def _glossary() -> str:
    text = (Path(__file__).resolve().parents[1] / "docs" / "glossary.md").read_text(encoding="utf-8")
    return text.split("\n### ", 1)[1] if "\n### " in text else text


_ui.page_intro("glossary")
st.subheader("The papers")
st.markdown("\n".join(f"- {p.cite()}" for p in PAPERS.values()))
st.caption(f"Where the implementation departs from a paper, and why, is written down in the project's "
           f"documentation ({_ui.doc_link('deviations')}); every document is on the "
           f"{_ui.doc_link('README', 'Documentation')} page.")
st.subheader("Glossary")
st.markdown("### " + _glossary())
_ui.lesson_nav("glossary")

"""The project's documentation, read inside the app (offline): one document of docs/ at a time."""

import streamlit as st

from dashboard import docs
from dashboard import ui as _ui

_ui.page_intro("docs")
names = docs.names()
wanted = st.query_params.get("doc")  # a link such as docs?doc=deviations
name = st.selectbox("Document", names, index=names.index(wanted) if wanted in names else 0, format_func=docs.title,
                    key="docs_doc", help="The files of the project's docs/ folder, rendered here.")
st.query_params["doc"] = name  # kept in the URL (dashboard.registry: the page's own parameter)
st.caption(f"docs/{name}.md · links to other documents open them here, in a new tab.")
st.divider()
for kind, body, caption in docs.parts(name):
    if kind == "image":
        st.image(body, caption=caption)
    else:
        st.markdown(body)
_ui.lesson_nav("docs")

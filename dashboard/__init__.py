"""The dashboard's own code, beside ``app.py`` (not part of the installed library).

* ``dashboard/pages/`` -- one script per page, run by ``app.py``'s ``st.navigation``. (Not a
  top-level ``pages/`` folder: Streamlit runs such a folder as an old-style multipage app until the
  server's first ``st.navigation`` call, so a shared link opened on a fresh server ran three times.)

* :mod:`dashboard.settings` -- the privacy controls' grids and the shareable URL state (pure Python).
* :mod:`dashboard.data` -- datasets as the dashboard holds them: the library's ``Dataset`` plus where
  it came from, uploads read with the library's CSV rules and typed public bounds (pure Python).
* :mod:`dashboard.ui` -- Streamlit: session state, the sidebar, cached calls into ``dpsynth_core``,
  widgets built from parameter schemas, the release panel and safe error display.

The mathematics lives in ``dpsynth_core``; the figures in ``dpsynth_core.viz``.
"""

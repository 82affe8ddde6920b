"""The dashboard's own code, beside ``app.py`` and ``pages/`` (not part of the installed library).

* :mod:`dashboard.settings` -- the privacy controls' grids and the shareable URL state (pure Python).
* :mod:`dashboard.data` -- datasets as the dashboard holds them: the library's ``Dataset`` plus where
  it came from, uploads read with the library's CSV rules and typed public bounds (pure Python).
* :mod:`dashboard.ui` -- Streamlit: session state, the sidebar, cached calls into ``dpsynth_core``,
  widgets built from parameter schemas, the release panel and safe error display.

The mathematics lives in ``dpsynth_core``; the figures in ``dpsynth_core.viz``.
"""

"""The dashboard's own code, beside ``app.py`` and ``app_pages/`` (not part of the installed library).

Plain Python (no Streamlit): :mod:`dashboard.registry` (the pages), :mod:`dashboard.settings` (the privacy
settings' type, the sliders' grids, the shareable URL), :mod:`dashboard.data` (the built-in data sources),
:mod:`dashboard.upload` (an uploaded file and its typed :class:`~dashboard.upload.UploadForm`),
:mod:`dashboard.lessons` and :mod:`dashboard.controls` (the lesson path's text, the parameters' labels),
:mod:`dashboard.w1_live` (the background worker of the W1 headline).

Streamlit, by concern (the pages import them through the face :mod:`dashboard.ui`): :mod:`dashboard.state`
(the one owner of the session), :mod:`dashboard.sidebar`, :mod:`dashboard.navigation`,
:mod:`dashboard.compute` (cached library calls, safe errors), :mod:`dashboard.widgets`,
:mod:`dashboard.release_panel` with :mod:`dashboard.eligibility`, :mod:`dashboard.headline`,
:mod:`dashboard.preserves` and :mod:`dashboard.downloads`, :mod:`dashboard.sweep`, and the Data page's
:mod:`dashboard.data_view` and :mod:`dashboard.upload_view`. What each owns: docs/architecture.md.

The mathematics lives in ``dpsynth_core``, the words for its typed facts in ``dpsynth_core.wording``, the
figures in ``dpsynth_core.viz``.
"""

"""The dashboard's own code, beside ``app.py`` and ``pages/`` (not part of the installed library).

Plain Python (no Streamlit):

* :mod:`dashboard.registry` -- the pages, one typed :class:`~dashboard.registry.Page` record each;
  ``app.py`` builds the navigation from it, the tests and the browser benchmark visit every page in it.
* :mod:`dashboard.settings` -- the privacy controls' grids and the shareable URL state.
* :mod:`dashboard.data` -- datasets as the dashboard holds them: the library's ``Dataset`` plus where
  it came from, uploads read with the library's CSV rules and typed public bounds.
* :mod:`dashboard.lessons` -- the lesson path's text; :mod:`dashboard.controls` -- the students' labels of
  the parameters.

Streamlit, by concern (the pages import them through the face :mod:`dashboard.ui`):

* :mod:`dashboard.state` -- session state: the dataset, the privacy settings, messages, the URL;
* :mod:`dashboard.sidebar` -- the privacy controls and the ledger;
* :mod:`dashboard.compute` -- cached calls into ``dpsynth_core`` and safe error display;
* :mod:`dashboard.widgets` -- controls built from parameter schemas, charts with their explanation;
* :mod:`dashboard.release_panel` -- a mechanism page's release, from :mod:`dashboard.eligibility` (the limits
  and the relation switch), :mod:`dashboard.headline` (W1, bound, size, guarantee), :mod:`dashboard.preserves`
  (the owner report) and :mod:`dashboard.downloads` (private downloads);
* :mod:`dashboard.navigation` -- a page's frame: ``require_app``, its lesson, the lesson path's links;
* :mod:`dashboard.sweep` -- a long computation behind a button: a progress bar, its result kept.

The mathematics lives in ``dpsynth_core``; the figures in ``dpsynth_core.viz``.
"""

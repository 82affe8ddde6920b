"""The face the pages import (``from dashboard import ui as _ui``): every helper a page uses, by concern.

A page reads as a short story: its frame and controls (:mod:`~dashboard.navigation`,
:mod:`~dashboard.widgets`), ONE cached call into :mod:`dpsynth_core` (:mod:`~dashboard.compute`, or
:mod:`~dashboard.release_panel` for a mechanism page's release, or :mod:`~dashboard.sweep` for a long
computation behind a button), figures from :mod:`dpsynth_core.viz`, and a sentence of explanation.
Mechanism mathematics never lives in the dashboard. The modules behind this face:

* :mod:`dashboard.registry` -- the pages (one typed record each; plain Python);
* :mod:`dashboard.state` -- the session's one owner: the dataset, the privacy settings, messages, kept results;
* :mod:`dashboard.sidebar` -- the privacy controls and the ledger;
* :mod:`dashboard.compute` -- cached library calls and safe error display;
* :mod:`dashboard.widgets` -- parameter controls, charts with their explanation, "Look closer";
* :mod:`dashboard.release_panel` -- a mechanism page's release, made of :mod:`dashboard.eligibility` (limits and
  the relation switch, said before running), :mod:`dashboard.headline` (W1, bound, size, guarantee),
  :mod:`dashboard.preserves` (the owner report) and :mod:`dashboard.downloads` (private downloads);
* :mod:`dashboard.navigation` -- a page's frame: the lesson, the lesson path's links;
* :mod:`dashboard.docs` -- links that open the project's documents on the Documentation page;
* :mod:`dashboard.sweep` -- a long computation with a progress bar, its result kept in session state with its
  inputs (:mod:`dashboard.fingerprint`), labelled as earlier work when they change;
* the Data page's :mod:`dashboard.data_view` and :mod:`dashboard.upload_view`, imported by that page itself.
"""

from __future__ import annotations

from .compute import (
    BY_DOMAIN,
    clinic_first_screen,
    mechanism_label,
    mechanisms,
    safe,
    teaching_release,
    w1_of,
)
from .docs import doc_link, link_docs
from .eligibility import left_out, numeric_details, numeric_page_gate, relation_supported, switch_relation
from .fingerprint import inputs
from .navigation import lesson_box, lesson_nav, mechanism_header, page_intro
from .release_panel import release_section
from .state import add_to_count, count, data, flash, set_data, set_epsilon, settings, show_flash
from .sweep import epsilon_sweep, kept_sweep, weak_epsilon_caption
from .widgets import OWNER, look_closer, plot, schema_controls, w1_text

__all__ = [
    # the page's frame, and links to the documentation
    "page_intro", "lesson_box", "lesson_nav", "mechanism_header", "doc_link", "link_docs",
    # state
    "data", "settings", "set_data", "set_epsilon", "flash", "show_flash", "count", "add_to_count",
    # library calls
    "safe", "teaching_release", "w1_of", "mechanisms", "BY_DOMAIN", "clinic_first_screen",
    # a mechanism's release
    "release_section", "relation_supported", "switch_relation", "numeric_page_gate", "numeric_details",
    "left_out", "mechanism_label",
    # widgets
    "schema_controls", "plot", "look_closer", "w1_text", "OWNER",
    # a computation behind a button, kept with its inputs
    "kept_sweep", "epsilon_sweep", "inputs", "weak_epsilon_caption",
]

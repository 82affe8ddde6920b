"""Downloads of a private release: a NEW release drawn with fresh operating-system entropy (never the teaching
seed's, which anyone could reuse to re-draw the noise), its synthetic CSV and its public report."""

from __future__ import annotations

import re

import streamlit as st

from dpsynth_core import export
from dpsynth_core.domain_file import domain_json

from .compute import cached_release, safe
from .fingerprint import inputs
from .state import data, keep, kept, settings
from .sweep import earlier_work

__all__ = ["private_downloads", "domain_download", "release_stem"]


def private_downloads(name: str, params: dict, *, key: str) -> None:
    """Downloads of a NEW release drawn with fresh randomness (never the teaching seed's release).

    A button makes the release (same mechanism, data, ε, δ, relation and parameters as on screen);
    then its synthetic CSV (rows in random order) and its public report (allow-listed fields only:
    no W1 to the data, no true counts) can be downloaded.
    """
    d = data()
    s = settings()
    domain_download(d.domain, d.name, key=key)
    slot = f"fresh_{key}"  # the fresh release, kept with everything it was made from
    fingerprint = inputs(data=d, epsilon=s.epsilon, delta=s.delta, neighbours=s.neighbours, params=params,
                         mechanism=name)
    label = "Make a private release to download"
    if st.button(label, key=f"make_{key}", icon=":material/lock:",
                 help="The pictures use the teaching seed, which anyone could reuse to undo the noise. A download "
                      "is a new release drawn with fresh randomness: it differs from the one on screen."):
        rel = safe(cached_release, name, d.X, d.domain, s.epsilon, s.delta, s.neighbours, None,
                   tuple(sorted(params.items())), what=f"running {name}")
        if rel is not None:
            keep(slot, fingerprint, rel)
    stored = kept(slot)
    if stored is None:
        return
    if stored[0] != fingerprint:  # made for other inputs: said, and not offered as this page's release
        st.info(earlier_work(label, stored[0], fingerprint, what="A release made earlier"), icon=":material/history:")
        return
    fresh = stored[1]
    st.caption(f"A fresh release: {fresh.synthetic.shape[0]} synthetic {'rows' if fresh.domain.is_mixed else 'points'}, "
               f"{fresh.privacy}.")
    d1, d2 = st.columns(2)
    d1.download_button("Synthetic data (CSV)", data=export.synthetic_csv(fresh), icon=":material/download:",
                       file_name=f"{release_stem(fresh, data().name)}_synthetic.csv", mime="text/csv", key=f"dl_csv_{key}",
                       help="The synthetic data of the fresh release, rows in random order.")
    d2.download_button("Report (JSON)", data=export.report_json(fresh), icon=":material/download:",
                       file_name=f"{release_stem(fresh, data().name)}_report.json", mime="application/json", key=f"dl_json_{key}",
                       help="The fresh release's public report: ε, δ, relation, ledger, parameters, bound. Nothing "
                            "computed from the real data without noise.")


def domain_download(dom, name: str, *, key: str) -> None:
    """A button that downloads the public domain ``dom`` of the table ``name`` as a domain file (JSON,
    :func:`~dpsynth_core.domain_file.domain_json`): ``dpsynth synth --domain`` reads it as it is, and so does the
    upload form ("Fill the form from a domain file"). A domain read off the data is not public: no button then."""
    if not dom.declared:
        st.caption("No domain file to download: the bounds or categories of this table were read off the data.")
        return
    st.download_button("This table's public domain (JSON)", data=domain_json(dom), icon=":material/download:",
                       file_name=f"{release_stem_part(name)}_domain.json", mime="application/json",
                       key=f"dl_domain_{key}",
                       help="The bounds, categories and whole-number columns declared for this table: public, never "
                            "read off the data. The command line reads it as it is (dpsynth synth --domain FILE), and "
                            "the upload form on the Data and bounds page can be filled from it.")


def release_stem_part(text: str) -> str:
    """``text`` as a safe part of a file name."""
    return re.sub(r"[^A-Za-z0-9.-]+", "-", str(text)).strip("-.") or "x"


def release_stem(rel, dataset: str | None = None) -> str:
    """A download's file name before its suffix: the table's name, the mechanism, ε, δ and the neighbouring
    relation, compact and safe in any file system ("clinic_pmm_eps1_delta0_add-remove"; "1e-06" for δ = 10⁻⁶).
    The CSV itself stays plain (a comment line would break CSV readers); the report inside the JSON says the
    same in full."""
    parts = ((dataset,) if dataset else ()) + (rel.mechanism, f"eps{float(rel.epsilon):g}",
                                               f"delta{float(rel.delta or 0.0):g}", rel.neighbours)
    return "_".join(release_stem_part(p) for p in parts)



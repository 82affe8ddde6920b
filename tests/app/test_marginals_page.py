"""The marginal tables on the dashboard: their lesson page (every view, at the slider's ends and in between, on
numeric and mixed tables), the mechanism on Compare, Rates and Audit, and the Data page's sentence on what `auto`
picks for the current table."""

from __future__ import annotations

import re

import numpy as np
import pytest
from apptest import charts, errors, exceptions, goto, new_app, small_data

from dashboard.lessons import LESSONS
from dpsynth_core import MECHANISMS, Domain
from dpsynth_core.datasets import Dataset, clinic
from dpsynth_core.defaults import auto_mechanism
from dpsynth_core.marginal_views import keep_and_lose

VIEWS = ("The 1-way tables", "The 2-way tables and the fit", "Against PMM's tree")


def _numeric(n: int = 400, d: int = 3, seed: int = 2) -> Dataset:
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(0.5, 0.15, size=(n, d)), 0, 1)
    X[:, 1] = np.clip(0.7 * X[:, 0] + 0.3 * rng.random(n), 0, 1)  # a correlated pair
    return Dataset(X, Domain([0] * d, [1] * d, names=tuple(f"c{j}" for j in range(d))), "three", "test data")


def _open_every_view(at, where: str) -> None:
    for view in VIEWS:
        at.segmented_control(key="mg_view").set_value(view).run()
        assert not at.exception, (where, view, exceptions(at))
        assert not errors(at), (where, view, errors(at))
        assert len(charts(at)) >= 2, (where, view)  # the release's scatter and the view's figure
        assert any("material/lock" in c.value for c in at.caption), (where, view, "owner views must be labelled")


@pytest.mark.parametrize("data", ["numeric", "mixed"])
@pytest.mark.parametrize("eps", [0.001, 1.0, 100.0])
def test_the_marginals_page_at_every_epsilon_on_numeric_and_mixed_tables(data, eps):
    at = new_app(_numeric() if data == "numeric" else clinic(400))
    at.sidebar.select_slider(key="epsilon").set_value(eps)
    goto(at, "marginals")
    where = f"{data}, eps={eps}"
    assert not at.exception, (where, exceptions(at))
    assert at.title[0].value == LESSONS["marginals"].title
    assert not errors(at), (where, errors(at))
    assert len(at.metric) >= 4  # the shared headline: W1, bound, size, guarantee
    assert at.session_state["release_info"].title == MECHANISMS["marginals"].title  # the sidebar's ledger
    text = " ".join(m.value for m in at.markdown)
    assert "One family with Certified marginals" in text and "docs?doc=marginals" in text
    if eps == 1.0 or data == "numeric":  # every view; on the clinic table at the slider's ends, the page's default
        _open_every_view(at, where)      # view (its views there took 20 s of the suite's CPU for the same code)


def test_against_pmm_shows_the_library_comparison_of_the_page_releases():
    """The bars are the library's keep_and_lose of the two teaching releases on screen (one call, no page maths)."""
    data = _numeric(500, 3)
    at = new_app(data)
    goto(at, "marginals")
    at.segmented_control(key="mg_view").set_value("Against PMM's tree").run()
    assert not at.exception and not errors(at), errors(at)
    # the default pair is two numeric columns: its correlation is what the caption reports
    assert at.selectbox(key="mg_kl_a").value == "c0" and at.selectbox(key="mg_kl_b").value == "c1"
    caption = next(c.value for c in at.caption if c.value.startswith("The correlation of c0 and c1"))
    fig = at.get("plotly_chart")[-1].proto.spec
    assert "3-way error" in fig and "PMM's tree" in fig and "marginal tables" in fig
    # the same figures from the library directly, on the releases the page used (teaching seed 0)
    from dpsynth_core.mechanisms import bind

    rels = {m: bind(m, epsilon=1.0, neighbours="add_remove")(data.X, data.domain, rng=0) for m in ("marginals", "pmm")}
    kl = keep_and_lose(data.X, {m: r.synthetic for m, r in rels.items()}, data.domain, w1={}, pair=("c0", "c1"))
    assert f"{kl.real_association:.3f} in the real data" in caption
    for m in kl.table["association"]:
        assert f"{m:.3f} in the release" in caption


def test_compare_rates_and_audit_offer_and_run_the_marginal_tables():
    at = new_app(small_data(300))
    goto(at, "compare")
    assert "marginals" in at.multiselect(key="compare_mechs").value  # every registered mechanism by default
    at.multiselect(key="compare_mechs").set_value(["marginals", "pmm"]).run()
    at.button(key="compare_run").click().run()
    assert not at.exception and not errors(at), errors(at)
    _, (df, synth, _) = at.session_state["compare_result"]
    row = df[df["mechanism"] == "marginals"].iloc[0]
    assert row["status"] == "ok" and row["w1"] > 0 and "marginals" in synth
    assert MECHANISMS["marginals"].title in list(at.dataframe[0].value["mechanism"])

    goto(at, "rates")
    assert MECHANISMS["marginals"].title in at.multiselect(key="rates_mechs").options  # shown by title
    at.multiselect(key="rates_mechs").set_value(["marginals"]).run()
    at.slider(key="rates_reps").set_value(1).run()
    at.select_slider(key="rates_n").set_value(200).run()
    at.button(key="rates_run").click().run()
    assert not at.exception and not errors(at), errors(at)
    _, df = at.session_state["rates_result"]
    assert set(df["mechanism"]) == {"marginals"} and (df["w1"] > 0).all()

    goto(at, "audit")
    at.selectbox(key="audit_mech").set_value("marginals").run()
    at.select_slider(key="audit_trials").set_value(200).run()
    at.select_slider(key="audit_n").set_value(50).run()
    at.button(key="audit_run").click().run()
    assert not at.exception and not errors(at), errors(at)
    _, res = at.session_state["audit_result"]
    assert res.trials == 200 and res.epsilon_declared == 1.0
    assert res.epsilon_lower <= res.epsilon_declared  # a correct mechanism passes (95% by construction; fixed seed)


@pytest.mark.parametrize("data", ["two numeric columns", "clinic"])
def test_the_data_page_names_what_auto_picks_and_links_its_page(data):
    ds = small_data() if data != "clinic" else clinic(400)
    at = new_app(ds)
    goto(at, "data")
    assert not at.exception and not errors(at), errors(at)
    choice = auto_mechanism(ds.domain, epsilon=1.0)
    assert choice.mechanism == ("psmm" if data != "clinic" else "marginals")
    title = {"psmm": "Projected grid (PSMM)", "marginals": "Marginal tables"}[choice.mechanism]
    sentence = next(m.value for m in at.markdown if m.value.startswith("**Without choosing a mechanism**"))
    assert f"**{title}**: {choice.reason}." in sentence  # the library's reason, as it gives it
    links = at.get("page_link")
    assert any(el.proto.label == f"Open {title}" for el in links), [el.proto.label for el in links]


def test_what_the_lesson_says_you_should_see_is_what_the_page_computes():
    """The lesson's figures (ε = 1, teaching seed 0, the page's W1 budget) are the library's, rounded as written."""
    from dashboard import data as sources
    from dpsynth_core.mechanisms import bind
    from dpsynth_core.transport import wasserstein1

    said = " ".join(LESSONS["marginals"].expect)
    for ds, pair in ((sources.default()[0], ("x0", "x1")), (clinic(), ("age", "systolic_bp"))):
        rels = {m: bind(m, epsilon=1.0, neighbours="add_remove")(ds.X, ds.domain, rng=0) for m in ("marginals", "pmm")}
        # the exact W1 (the page's time budget may stop at the upper end of a bracket, which depends on the machine's
        # speed: 0.159 on a quiet machine, 0.17 under load for PMM on the clinic table)
        w1 = {m: wasserstein1(ds.X, ds.domain.read(r.synthetic), domain=ds.domain, return_result=True).value
              for m, r in rels.items()}
        kl = keep_and_lose(ds.X, {m: r.synthetic for m, r in rels.items()}, ds.domain, w1=w1, pair=pair)
        t = kl.table.set_index("release")
        if ds.domain.is_mixed:
            w1_said = (w1["marginals"], w1["pmm"], 2)
            figures = [
                       f"1-way error {t.at['marginals', 'one_way']:.2f} against {t.at['pmm', 'one_way']:.2f}",
                       f"2-way error {t.at['marginals', 'two_way']:.2f} against {t.at['pmm', 'two_way']:.2f}",
                       f"3-way error {t.at['marginals', 'three_way']:.2f} against {t.at['pmm', 'three_way']:.2f}",
                       f"({kl.real_association:.2f} real) is {t.at['marginals', 'association']:.2f} in the tables' "
                       f"release and {t.at['pmm', 'association']:.2f} in PMM's"]
        else:
            w1_said = (w1["pmm"], w1["marginals"], 3)
            figures = [
                       f"correlation {t.at['pmm', 'association']:.2f} against {t.at['marginals', 'association']:.2f} "
                       f"({kl.real_association:.2f} real)", f"only {rels['marginals'].params['coarse']} × "
                       f"{rels['marginals'].params['coarse']} cells"]
        missing = [f for f in figures if f not in said]
        assert not missing, (ds.name, missing)
        # "W1 about a against b": each within rounding (half a unit of the last digit written) of the exact value
        first, second, digits = w1_said
        m = re.search(r"W1 about (0\.\d{%d}) against (0\.\d{%d})" % (digits, digits), said[said.index(
            "On the clinic" if ds.domain.is_mixed else "On the default"):])
        assert m, (ds.name, said)
        tol = 0.5 * 10.0**-digits + 1e-12
        assert abs(float(m.group(1)) - first) <= tol and abs(float(m.group(2)) - second) <= tol, (ds.name, m.group(0),
                                                                                                  first, second)

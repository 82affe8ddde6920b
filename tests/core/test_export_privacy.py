"""Privacy of every export path: what leaves the machine, for every registered mechanism.

Export paths: ``Release.public()``, ``export.public_report``, ``export.report_json``,
``export.synthetic_csv``, the command line's ``--report`` and CSV (``dpsynth_core.cli.main``), and the
dashboard's downloads (``dashboard/downloads.py``, ``private_downloads``: ``export.report_json`` and
``export.synthetic_csv`` of a fresh release made with ``rng=None``; tested here on such a release,
without Streamlit).

What these tests prove
----------------------
1. **Shape.** On a neighbouring pair (D, D') of every relation a mechanism supports (add and remove
   for add/remove; move for replace), with the randomness held fixed (one pinned seed for both runs,
   which is what makes the comparison meaningful):

   * every top-level key of every exported report is in the allow-list ``export.PUBLIC_FIELDS``, and
     the set of keys is pinned exactly (a new key fails here even if someone adds it to the allow-list,
     so it gets reviewed);
   * every field of ``export.DATA_INDEPENDENT_FIELDS`` (mechanism, budget, relation, domain, label, ...)
     is identical on D and D': those fields are fixed by public inputs, so a difference would be a
     data-dependent value published as if it were public;
   * nothing owner-side appears at any depth: no ``trace`` or ``owner`` key, none of the keys of
     ``release.owner`` (true counts, true marginals, the true covariance, the number of clamped
     rows, the W1 to the data, ...) except three reviewed names that are also public parameter names
     (``n``: the size record's public or noisy n; ``noise``: the noise kind; ``subroutine``), and no
     key mentioning W1 other than two reviewed public ones;
   * the CSV has the domain's header and exactly ``n_synthetic`` rows.

   The other fields (synthetic data, sizes, resolved parameters, ledger wording, bound, notes) are
   functions of the DP output and *legitimately change* between D and D'; these tests cannot say
   whether those changes are small enough. That is the audit's job (2). Nor can they see a private
   value hidden inside an allowed field (a true count written into a note, say): the key checks catch
   names, not values.

2. **An empirical audit through the export**, per mechanism: ``dpsynth_core.audit.audit`` with a
   statistic computed from the exported *text* (the CSV or the JSON report, parsed back), never from
   the in-memory release, so whatever the export adds or drops is audited too. The statistics are
   events with power (docs/audit.md, "Events with power"): the count of exported synthetic rows in
   the finest cell around the record that differs, the exported value of a one-record release, the
   exported mean. Each audit is a one-sided test at level α = 0.05 with fixed seeds (as in
   tests/core/test_audit.py): for an (ε, δ)-DP export, ε̂ > ε happens with probability at most 5%
   over the seeds, so the fixed seed gives a reproducible pass that a correct export keeps, while a
   failure means a violation or, at most once in twenty reseedings, a false alarm. Trials are as many
   as keep a case within a few seconds on two shared cores; they set the power, not the validity.
   ``test_the_export_audit_has_power`` shows that a release declaring ε = 1 but calibrated for ε = 8
   is caught through the same exported statistic. An audit can refute a claimed ε, never prove it.

3. **Labels**: a pinned seed's report says "reproducible, not private" (the seed re-draws the noise);
   the fresh default says "differentially private"; the command line likewise without / with
   ``--seed``.
"""

from __future__ import annotations

import dataclasses
import io
import json
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest

from dpsynth_core import Domain, export
from dpsynth_core.audit import audit, neighbouring_pair, relation_of
from dpsynth_core.cli import main as cli_main
from dpsynth_core.mechanisms import MECHANISMS, load_all, run

load_all()

ALPHA = 0.05
SEED = 11

#: Small, fast parameters per mechanism for the shape tests (the export does not depend on the size).
SMALL: dict[str, dict] = {
    "flat_histogram": dict(bins=4),
    "per_point_laplace": {},
    "pmm": dict(depth=3),
    "psmm": dict(cells=4, projection="clip"),
    "haar_walk": dict(grid=8),
    "private_evolution": dict(delta=1e-3, iterations=2, n_synthetic=20, track_w1=False),
    "low_dim": dict(target_dim=1),
    "sparse_marginals": dict(s=1, k=2, public="grid", mc_draws=20, certificate="L_T"),
    "marginals": dict(fine=4, coarse=2, mc_draws=19, iterations=10),
}
#: Keys of trace["owner"] that are also the names of public fields (reviewed): the size record's n is
#: the public or noisy n, "noise" the noise kind, "subroutine" low_dim's subroutine name.
OWNER_NAMES_ALSO_PUBLIC = {"n", "noise", "subroutine"}
#: Keys that mention W1 and are public: PE's switch for the owner-side tracking, the Haar walk's bound
#: term (the W1 of rounding the DP measure on the line, a function of the DP output only).
PUBLIC_W1_KEYS = {"track_w1", "rounding_w1"}
KIND_POINT = {"add": [0.3, 0.7], "remove": None, "move": [0.05, 0.05]}


def _kinds(name: str) -> list[str]:
    out = []
    for rel in MECHANISMS[name].neighbours:
        out += ["add", "remove"] if rel == "add_remove" else ["move"]
    return out


def _pair(kind: str, d: int = 2, n: int = 30):
    X = np.random.default_rng(1).random((n, d))
    point = None if KIND_POINT[kind] is None else np.asarray(KIND_POINT[kind][:d])
    return neighbouring_pair(X, kind, point=point, index=3)


def _release(name: str, X: np.ndarray, kind: str, rng: Any):
    kw = dict(SMALL[name])
    if "delta" not in kw and MECHANISMS[name].needs_delta:
        kw["delta"] = 1e-5
    return run(name, X, Domain.unit(X.shape[1]), epsilon=1.0, neighbours=relation_of(kind), rng=rng, **kw)


def _all_keys(obj: Any, out: set | None = None) -> set:
    out = set() if out is None else out
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.add(str(k))
            _all_keys(v, out)
    elif isinstance(obj, list):
        for v in obj:
            if isinstance(v, (dict, list)):
                _all_keys(v, out)
    return out


def _check_report(report: dict, rel, *, with_synthetic: bool) -> None:
    expected = set(export.PUBLIC_FIELDS) - (set() if with_synthetic else {"synthetic"})
    assert set(report) <= export.PUBLIC_FIELDS, sorted(set(report) - export.PUBLIC_FIELDS)
    assert set(report) == expected, ("a new or missing report key: review it and update this test",
                                     sorted(set(report) ^ expected))
    keys = _all_keys(report)
    owner_names = {f.name for f in dataclasses.fields(rel.owner)}
    forbidden = ({"trace", "owner"} | owner_names) - OWNER_NAMES_ALSO_PUBLIC
    assert not keys & forbidden, sorted(keys & forbidden)
    w1_keys = {k for k in keys if "w1" in k.lower()}
    assert w1_keys <= PUBLIC_W1_KEYS, sorted(w1_keys - PUBLIC_W1_KEYS)


def _parse_csv(data: bytes | str) -> tuple[list[str], np.ndarray]:
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    header, _, body = text.partition("\n")
    names = header.strip().split(",")
    if not body.strip():
        return names, np.zeros((0, len(names)))
    return names, np.loadtxt(io.StringIO(body), delimiter=",", ndmin=2)


def _exports(rel, *, seed: Any) -> dict:
    """Every in-library export of one release, parsed back."""
    out = {
        "public": json.loads(json.dumps(export.public_report(rel, include_synthetic=True))),
        "public_no_synthetic": rel.public(include_synthetic=False),
        "public_report": export.public_report(rel),
        "report_json": json.loads(export.report_json(rel)),
        "report_json_synthetic": json.loads(export.report_json(rel, include_synthetic=True)),
    }
    out["csv"] = _parse_csv(export.synthetic_csv(rel, rng=seed))
    return out


# ------------------------------------------------------------------------------------ 1. shape
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_mechanism_is_covered(name):
    assert name in SMALL, f"{name!r} is registered but has no entry in SMALL of {__file__}"


def _shape_cases():
    return [(name, kind) for name in sorted(MECHANISMS) for kind in _kinds(name)]


@pytest.mark.parametrize("name,kind", _shape_cases())
def test_library_exports_are_allow_listed_and_public_fields_do_not_move(name, kind):
    D, D2 = _pair(kind)
    outs = []
    for X in (D, D2):
        rel = _release(name, X, kind, SEED)
        ex = _exports(rel, seed=SEED)
        assert set(rel.public()) == set(export.PUBLIC_FIELDS)
        for key, report in ex.items():
            if key == "csv":
                continue
            _check_report(report, rel, with_synthetic=key in ("public", "report_json_synthetic"))
        names, rows = ex["csv"]
        assert names == list(rel.domain.names)
        assert rows.shape == (ex["report_json"]["n_synthetic"], rel.domain.d)
        np.testing.assert_allclose(np.sort(rows, axis=0), np.sort(rel.synthetic, axis=0), rtol=0, atol=1e-12)
        outs.append(ex)
    for field_name in export.DATA_INDEPENDENT_FIELDS:
        assert outs[0]["report_json"][field_name] == outs[1]["report_json"][field_name], field_name


@pytest.mark.parametrize("name,kind", _shape_cases())
def test_dashboard_download_path_on_a_fresh_release(name, kind):
    """The dashboard's downloads: a NEW release with rng=None, then export.report_json and
    export.synthetic_csv (fresh permutation). Data-independent fields do not depend on the randomness
    either, so they agree on D and D' even with fresh noise on each."""
    D, D2 = _pair(kind)
    reports = []
    for X in (D, D2):
        rel = _release(name, X, kind, None)
        report = json.loads(export.report_json(rel))
        _check_report(report, rel, with_synthetic=False)
        assert report["randomness"]["source"] == "fresh" and report["label"] == "differentially private"
        names, rows = _parse_csv(export.synthetic_csv(rel))
        assert names == list(rel.domain.names) and rows.shape == (report["n_synthetic"], rel.domain.d)
        reports.append(report)
    for field_name in export.DATA_INDEPENDENT_FIELDS:
        assert reports[0][field_name] == reports[1][field_name], field_name


def _cli_args(name: str, kind: str) -> list[str]:
    kw = dict(SMALL[name])
    delta = kw.pop("delta", 1e-5 if MECHANISMS[name].needs_delta else None)
    args = ["--mechanism", name, "--epsilon", "1", "--bounds", "0:1", "--neighbours", relation_of(kind), "-q"]
    if delta is not None:
        args += ["--delta", str(delta)]
    for k, v in kw.items():
        args += ["--param", f"{k}={str(v).lower() if isinstance(v, bool) else v}"]
    return args


def _cli_synth(tmp_path, tag: str, X: np.ndarray, args: list[str], seed: int | None) -> tuple[dict, tuple]:
    data = tmp_path / f"{tag}.csv"
    np.savetxt(data, X, delimiter=",", header="x,y", comments="", fmt="%.17g")
    out, rep = tmp_path / f"{tag}_synthetic.csv", tmp_path / f"{tag}_report.json"
    extra = [] if seed is None else ["--seed", str(seed)]
    assert cli_main(["synth", str(data), "-o", str(out), "--report", str(rep), *args, *extra]) == 0
    return json.loads(rep.read_text()), _parse_csv(out.read_bytes())


@pytest.mark.parametrize("name,kind", _shape_cases())
def test_command_line_report_and_csv(name, kind, tmp_path):
    D, D2 = _pair(kind)
    args = _cli_args(name, kind)
    reports = []
    for tag, X in (("D", D), ("D2", D2)):
        report, (names, rows) = _cli_synth(tmp_path, tag, X, args, SEED)
        assert set(report) == set(export.PUBLIC_FIELDS) - {"synthetic"}
        assert not _all_keys(report) & {"trace", "owner", "true_counts", "true_marginals", "n_clamped", "w1"}
        assert names == ["x", "y"] and rows.shape == (report["n_synthetic"], 2)
        assert report["label"].startswith("reproducible, not private")
        reports.append(report)
    for field_name in export.DATA_INDEPENDENT_FIELDS:
        assert reports[0][field_name] == reports[1][field_name], field_name


# ------------------------------------------------------------------- 2. audits through the export
def csv_box_count(lower, upper) -> Callable:
    """Statistic: exported synthetic rows with lower <= x < upper, read from the CSV text."""
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)

    def stat(rel) -> float:
        _, rows = _parse_csv(export.synthetic_csv(rel, rng=0))
        inside = np.all((rows >= lo) & np.where(hi >= 1.0, rows <= hi, rows < hi), axis=1)
        return float(np.count_nonzero(inside))

    return stat


def csv_column_mean(j: int) -> Callable:
    """Statistic: the mean of column j of the exported CSV (0 when empty)."""
    def stat(rel) -> float:
        _, rows = _parse_csv(export.synthetic_csv(rel, rng=0))
        return float(rows[:, j].mean()) if rows.shape[0] else 0.0

    return stat


def report_size(rel) -> float:
    """Statistic: the exported size, read from the JSON report."""
    return float(json.loads(export.report_json(rel))["n_synthetic"])


@dataclass
class ExportAudit:
    kind: str
    statistic: Callable
    trials: int
    params: dict
    data: np.ndarray
    point: Any = None
    index: int = 0
    epsilon: float = 1.0
    delta: float = 0.0
    extra: dict = field(default_factory=dict)


_X30 = np.random.default_rng(1).random((30, 2))
#: One audit per relation each mechanism supports, with a statistic read from the exported text.
EXPORT_AUDITS: dict[str, list[ExportAudit]] = {
    "flat_histogram": [
        ExportAudit("add", csv_box_count([0.25, 0.5], [0.5, 0.75]), 500, dict(bins=4, n_synthetic=30), _X30,
                    point=[0.3, 0.7]),
        ExportAudit("move", csv_box_count([0.0, 0.0], [0.25, 0.25]), 500, dict(bins=4), _X30, point=[0.05, 0.05]),
    ],
    "per_point_laplace": [
        ExportAudit("move", csv_column_mean(0), 600, {}, np.zeros((1, 1)), point=[1.0]),
    ],
    "pmm": [
        ExportAudit("add", csv_box_count([0.0, 0.5], [0.5, 1.0]), 400, dict(depth=2, n_public=30), _X30,
                    point=[0.3, 0.7]),
        ExportAudit("move", csv_box_count([0.0, 0.0], [0.5, 0.5]), 400, dict(depth=2), _X30, point=[0.05, 0.05]),
    ],
    "psmm": [
        ExportAudit("add", csv_box_count([0.25, 0.5], [0.5, 0.75]), 400,
                    dict(cells=4, n_public=30, projection="clip", n_synthetic=30), _X30, point=[0.3, 0.7]),
        ExportAudit("move", csv_box_count([0.0, 0.0], [0.25, 0.25]), 400, dict(cells=4, projection="clip"), _X30,
                    point=[0.05, 0.05]),
    ],
    "haar_walk": [
        ExportAudit("add", csv_box_count([0.25], [0.5]), 400, dict(grid=4, n_synthetic=30),
                    np.random.default_rng(1).random((30, 1)), point=[0.3]),
        ExportAudit("move", csv_box_count([0.75], [1.0]), 400, dict(grid=4), np.random.default_rng(1).random((30, 1)),
                    point=[0.9], index=2),
        ExportAudit("add", report_size, 200, dict(grid=4), np.random.default_rng(1).random((30, 1)), point=[0.3],
                    extra=dict(note="the exported size: the noisy n under add/remove")),
    ],
    "private_evolution": [
        ExportAudit("move", csv_box_count([0.5, 0.5], [1.0, 1.0]), 300,
                    dict(iterations=1, n_synthetic=4, track_w1=False), np.array([[0.1, 0.1]]), point=[0.9, 0.9],
                    delta=1e-3),
        ExportAudit("add", csv_box_count([0.5, 0.5], [1.0, 1.0]), 300,
                    dict(iterations=1, n_synthetic=4, track_w1=False, n_public=2), np.array([[0.1, 0.1]]),
                    point=[0.9, 0.9], delta=1e-3),
    ],
    "low_dim": [
        # ε = 6 so the mean step (ε/3 = 2) is visible at test-sized trials; the exported mean follows it
        ExportAudit("move", csv_column_mean(0), 200, dict(target_dim=1), np.zeros((10, 2)), point=[1.0, 1.0],
                    epsilon=6.0),
    ],
    "marginals": [
        ExportAudit("add", csv_box_count([0.25, 0.5], [0.5, 0.75]), 400,
                    dict(fine=4, coarse=2, n_public=30, n_synthetic=30, mc_draws=9, beta=0.1, iterations=10), _X30,
                    point=[0.3, 0.7]),
        ExportAudit("move", csv_box_count([0.0, 0.0], [0.25, 0.25]), 400,
                    dict(fine=4, coarse=2, mc_draws=9, beta=0.1, iterations=10), _X30, point=[0.05, 0.05]),
        ExportAudit("add", report_size, 300, dict(fine=4, coarse=2, mc_draws=9, beta=0.1, iterations=10), _X30,
                    point=[0.3, 0.7], extra=dict(note="the exported size: read off the tables' noisy totals")),
    ],
    "sparse_marginals": [
        ExportAudit("move", csv_box_count([0.5], [1.0]), 150, dict(s=1, k=2, public="grid", mc_draws=20,
                                                                    certificate="L_T"),
                    np.random.default_rng(1).random((30, 1)), point=[0.9], index=2),
    ],
}


def _export_audit(name: str, case: ExportAudit, *, run_epsilon: float | None = None):
    D, D2 = neighbouring_pair(case.data, case.kind, point=None if case.point is None else np.asarray(case.point),
                              index=case.index)
    dom = Domain.unit(case.data.shape[1])
    kw = dict(case.params, neighbours=relation_of(case.kind))
    if MECHANISMS[name].needs_delta:
        kw["delta"] = case.delta

    def mech(X, rng):
        return run(name, X, dom, epsilon=case.epsilon if run_epsilon is None else run_epsilon, rng=rng, **kw)

    return audit(mech, D, D2, statistic=case.statistic, trials=case.trials, epsilon=case.epsilon, delta=case.delta,
                 rng=20261123, alpha=ALPHA)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_mechanism_and_relation_is_audited_through_the_export(name):
    assert name in EXPORT_AUDITS, f"{name!r} has no entry in EXPORT_AUDITS"
    assert set(MECHANISMS[name].neighbours) <= {relation_of(c.kind) for c in EXPORT_AUDITS[name]}


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("name,i", [(n, i) for n in sorted(EXPORT_AUDITS) for i in range(len(EXPORT_AUDITS[n]))])
def test_export_passes_its_audit(name, i):
    case = EXPORT_AUDITS[name][i]
    res = _export_audit(name, case)
    samples = np.r_[res.samples_D, res.samples_D_prime]
    assert np.unique(samples).size > 1, "a constant statistic cannot fail: the audit would prove nothing"
    assert res.epsilon_lower <= case.epsilon, (name, case.kind, res.summary())


@pytest.mark.slow
def test_the_export_audit_has_power():
    """A flat histogram that declares ε = 1 but draws noise for ε = 8 is caught through the exported CSV."""
    case = EXPORT_AUDITS["flat_histogram"][0]
    res = _export_audit("flat_histogram", case, run_epsilon=8.0)
    assert res.epsilon_lower > case.epsilon, res.summary()


def test_the_exported_statistic_is_the_release_statistic():
    """The CSV round trip keeps every row: the count read from the text equals the in-memory count."""
    rel = run("flat_histogram", _X30, Domain.unit(2), epsilon=1.0, bins=4, n_synthetic=30, rng=3)
    S = rel.synthetic
    inside = np.all((S >= [0.25, 0.5]) & (S < [0.5, 0.75]), axis=1)
    assert csv_box_count([0.25, 0.5], [0.5, 0.75])(rel) == float(np.count_nonzero(inside))
    assert report_size(rel) == float(S.shape[0])


# --------------------------------------------------------------------------------------- 3. labels
@pytest.mark.parametrize("name", ["pmm", "sparse_marginals", "private_evolution"])
def test_pinned_seed_is_labelled_reproducible_not_private_and_fresh_is_private(name):
    X = _X30
    kind = "move" if "replace" in MECHANISMS[name].neighbours else "add"
    pinned = json.loads(export.report_json(_release(name, X, kind, 5)))
    fresh = json.loads(export.report_json(_release(name, X, kind, None)))
    assert pinned["label"].startswith("reproducible, not private") and "seed" in pinned["label"]
    assert pinned["randomness"]["source"] == "seed" and pinned["randomness"]["private"] is False
    assert pinned["randomness"]["seed"] == 5
    assert fresh["label"] == "differentially private"
    assert fresh["randomness"]["source"] == "fresh" and fresh["randomness"]["private"] is True
    assert "seed" not in fresh["randomness"]


def test_command_line_labels_with_and_without_seed(tmp_path):
    args = _cli_args("flat_histogram", "add")
    fresh, _ = _cli_synth(tmp_path, "fresh", _X30, args, None)
    pinned, _ = _cli_synth(tmp_path, "pinned", _X30, args, 9)
    assert fresh["label"] == "differentially private" and fresh["randomness"]["source"] == "fresh"
    assert pinned["label"].startswith("reproducible, not private") and pinned["randomness"]["seed"] == 9

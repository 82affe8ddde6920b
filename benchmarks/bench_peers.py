"""How dpsynth compares with the tools users would pick instead (issue 27, item 4).

Peers: smartnoise-synth 1.0.8's AIM, MST and MWEM (private-pgm ``mbi`` 1.1.0 underneath AIM and
MST), run in the benchmark's OWN virtual environment ``benchmarks/peers/.venv-peers`` (created from
``benchmarks/peers/requirements.txt`` when missing; smartnoise-synth itself is installed without its
dependencies because its GAN synthesizers pull PyTorch through Opacus, which AIM, MST and MWEM do not
use). The project's dependencies are untouched. The synthesizers run in ``benchmarks/peers/worker.py``.

Protocol
    Tables (``benchmarks/study_data.py``, declared bounds, never the data's min/max): diabetes in
    d = 2, 4, 6 (442 rows), breast cancer in d = 3, 5 (569 rows). ε = 0.3, 1, 3; five seeds (0-4)
    for dpsynth, MST and MWEM, three (0-2) for AIM, the slowest by far (the machine's CPU budget).
    Peers: each column through smartnoise's ``BinTransformer(lower, upper, bins)`` with the declared
    bounds (no budget on bounds); the number of bins per (table, peer) chosen in the peer's favour:
    the value of {8, 16} (d <= 3) or {4, 8} (d >= 4) with the lowest W1 at ε = 1 on a separate
    tuning seed (100), a non-private choice that only helps them; tuned for MST and MWEM, AIM takes
    MST's (both fit a graphical model on the same binned domain); MWEM only where its dense
    histogram has at most 2^16 cells, beyond which one run takes minutes. Released bin
    midpoints are jittered uniformly inside their bin. δ = 1e-5 for AIM and MST (smartnoise's
    default is 1e-9); MWEM is pure ε-DP (δ = 0).
    dpsynth: pmm, psmm, private_evolution (δ = 1e-5), low_dim, flat_histogram, haar_walk
    (a) at their CURRENT defaults, as a user runs them (default relation; under add/remove 5 % of ε
    buys a noisy n), and (b) at the proposed rules of ``dpsynth_core.defaults`` passed explicitly,
    with ``n_public = n`` (the peers use the exact n too; low_dim's rule is ``low_dim_plan``).

Metrics (owner view: computed against the real table)
    * W1: exact, unit cube, l_inf (``wasserstein1(method="pot")``, duality-checked);
    * 1-way / 2-way marginal error: on a fixed evaluation grid of 10 equal bins per axis of the
      declared box, the total-variation distance (half the L1 distance) between the real and the
      synthetic normalised histograms of each column (1-way) or each pair of columns (2-way, 10 x 10
      cells), averaged over columns / pairs; 0 = identical, 1 = disjoint;
    * train on synthetic, test on real: R^2 on the whole real table of a random forest
      (scikit-learn ``RandomForestRegressor(n_estimators=50, min_samples_leaf=5, random_state=0)``)
      trained on the synthetic rows to predict the last column from the others (diabetes: the disease
      progression score; breast: the last feature listed in ``study_data.BREAST_COLUMNS``). The same
      model trained and tested by 5-fold cross-validation on the real table is the ceiling;
    * CPU: process time of fit + sample (the peers' worker; JAX threads included) or of the release.

Privacy checks of the peers (``--audit``): the project's audit (``dpsynth_core.audit.audit``) on a
neighbouring pair that moves one record of diabetes (d = 2) to the corner of the declared box, and a
pair that adds one record, with the peers' releases replayed into it (they run in the other
environment). See ``docs/defaults.md``.

Could any default meet the peers? (``oracle``): PMM at every depth from the rule's - 3 to + 3 and PSMM at
every cell count from the rule's - 2 to + 3, n public, five seeds; the summary's ``"oracle"`` gives per
(table, ε) the value with the lowest mean W1 in hindsight and its ratio to the best peer, a bound on what
any default of the two mechanisms can reach (docs/defaults.md).

Results: ``benchmarks/results/peers.jsonl`` (one line per run; resumable) and
``benchmarks/results/peers.json`` (summary, audit, versions). Usage::

    nice -n 10 .venv/bin/python benchmarks/bench_peers.py [tune] [peers] [ours] [oracle] [marginals] [audit] [summarise] [--quick]

The marginal tables (``marginals``, issue 34): ``phase_marginals`` runs them in the peers' convention (n public,
δ = 1e-5), the project's default convention (noisy n, δ = 1e-5) and through ``auto``, ten seeds; the
summary's ``"marginals"`` has, per (table, ε), the ratios to the best peer and the acceptance of issue 34.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import common, study_data  # noqa: E402
from benchmarks.common import RESULTS, machine  # noqa: E402
from benchmarks.defaults_study import low_dim_split  # noqa: E402
from dpsynth_core import Domain, defaults, run  # noqa: E402
from dpsynth_core.transport import wasserstein1  # noqa: E402

PEERS_DIR = ROOT / "benchmarks" / "peers"
VENV = PEERS_DIR / ".venv-peers"
PY = VENV / "bin" / "python"
CACHE = RESULTS / "peers.jsonl"
#: Raw releases of the peers' worker, appended as each run ends (so that an interrupted batch loses at
#: most the run in progress); imported into CACHE by :func:`import_raw`. Not committed (large).
RAW = RESULTS / "peers_raw.jsonl"
AUDIT_RAW = RESULTS / "peers_audit_raw.jsonl"
IMG = ROOT / "docs" / "img"
TABLES = {"diabetes:2": None, "breast:3": None, "diabetes:4": None, "breast:5": None, "diabetes:6": None}
EPSILONS = (0.3, 1.0, 3.0)
SEEDS = (0, 1, 2, 3, 4)
TUNE_SEED = 100
DELTA = 1e-5
PEERS = ("mst", "mwem", "aim")
#: Peers whose bins are tuned (AIM takes MST's: both fit a graphical model on the same binned domain).
TUNED = ("mst", "mwem")
#: Seeds per peer (AIM, the slowest by far, gets three).
PEER_SEEDS = {"mst": (0, 1, 2, 3, 4), "mwem": (0, 1, 2, 3, 4), "aim": (0, 1, 2)}
OURS = ("pmm", "psmm", "private_evolution", "low_dim", "flat_histogram", "haar_walk")
MWEM_MAX_CELLS = 2**16
EVAL_BINS = 10


# ----------------------------------------------------------------------------- the peers' venv
def ensure_venv() -> None:
    """Create ``.venv-peers`` from the pinned requirements when it is missing."""
    if PY.exists():
        return
    print(f"creating {VENV} (smartnoise-synth and its pinned dependencies; about two minutes)", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(PY), "-m", "pip", "install", "--quiet"]
    subprocess.run(pip + ["--upgrade", "pip"], check=True)
    subprocess.run(pip + ["-r", str(PEERS_DIR / "requirements.txt")], check=True)
    subprocess.run(pip + ["--no-deps", "-r", str(PEERS_DIR / "requirements-nodeps.txt")], check=True)


def table(name: str):
    X, dom, y = study_data.load(name, TABLES.get(name), data_seed=1000)
    assert study_data.check_inside(X, dom) == 0
    return X, dom


def bin_candidates(name: str, peer: str) -> list[int]:
    d = int(name.split(":")[1])
    ks = [8, 16] if d <= 3 else [4, 8]
    if peer == "mwem":
        ks = [k for k in ks if k**d <= MWEM_MAX_CELLS] or [min(ks)]
    return ks


def run_peers(jobs: list[dict], out: Path, data: dict | None = None) -> dict:
    """Run jobs in the peers' venv (results appended to ``out`` as they end); return {id: result row}.

    ``data`` maps a job's table name to ``(X, lower, upper)`` (encoded rows and the declared bounds of
    every column); by default the tables of this benchmark (:func:`table`, ``AUDIT_TABLES``)."""
    ensure_venv()
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name in {j["table"] for j in jobs}:
            if data is not None:
                X, lower, upper = data[name]
            else:
                X, dom = table(name) if not name.startswith("audit") else AUDIT_TABLES[name]
                lower, upper = dom.lower_array, dom.upper_array
            p = Path(tmp) / f"{name.replace(':', '_')}.npz"
            np.savez(p, X=X, lower=lower, upper=upper)
            paths[name] = str(p)
        spec = Path(tmp) / "jobs.json"
        spec.write_text(json.dumps({"data": paths, "jobs": jobs}))
        subprocess.run([str(PY), str(PEERS_DIR / "worker.py"), str(spec), str(out)], check=True)
    rows = {}
    for line in out.read_text().splitlines():
        r = json.loads(line)
        rows[r["id"]] = r
    return rows


def jitter(Y: np.ndarray, dom: Domain, bins: int, rng: np.random.Generator) -> np.ndarray:
    """Bin midpoints -> uniform points inside their bin of the declared box."""
    lo, hi = dom.lower_array, dom.upper_array
    w = (hi - lo) / bins
    idx = np.clip(np.floor((Y - lo) / w), 0, bins - 1)
    return lo + (idx + rng.random(Y.shape)) * w


# ------------------------------------------------------------------------------------- metrics
def marginal_errors(X: np.ndarray, Y: np.ndarray, dom: Domain) -> tuple[float, float]:
    U, V = dom.to_unit(X), dom.to_unit(Y)
    k = EVAL_BINS
    cu = np.clip((U * k).astype(int), 0, k - 1)
    cv = np.clip((V * k).astype(int), 0, k - 1)
    d = U.shape[1]
    one = [0.5 * np.abs(np.bincount(cu[:, j], minlength=k) / len(U) - np.bincount(cv[:, j], minlength=k) / len(V)).sum()
           for j in range(d)]
    two = []
    for a, b in itertools.combinations(range(d), 2):
        hu = np.bincount(cu[:, a] * k + cu[:, b], minlength=k * k) / len(U)
        hv = np.bincount(cv[:, a] * k + cv[:, b], minlength=k * k) / len(V)
        two.append(0.5 * np.abs(hu - hv).sum())
    return float(np.mean(one)), float(np.mean(two)) if two else float("nan")


def _forest():
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(n_estimators=50, min_samples_leaf=5, random_state=0, n_jobs=1)


def tstr(X: np.ndarray, Y: np.ndarray) -> float:
    from sklearn.metrics import r2_score

    if len(Y) < 5:
        return float("nan")
    model = _forest().fit(Y[:, :-1], Y[:, -1])
    return float(r2_score(X[:, -1], model.predict(X[:, :-1])))


def real_ceiling(X: np.ndarray) -> float:
    from sklearn.model_selection import cross_val_score

    return float(np.mean(cross_val_score(_forest(), X[:, :-1], X[:, -1], cv=5, scoring="r2")))


def metrics(X: np.ndarray, Y: np.ndarray, dom: Domain) -> dict:
    r = wasserstein1(X, Y, domain=dom, method="pot", return_result=True)
    m1, m2 = marginal_errors(X, Y, dom)
    return {"w1": float(r.value), "exact": bool(r.exact), "certified": bool(r.certified), "marg1": m1, "marg2": m2,
            "tstr_r2": tstr(X, Y), "m": int(len(Y))}


# --------------------------------------------------------------------------------------- cache
def load_cache() -> dict:
    return common.load_cache(CACHE)


def put(rows: dict, row: dict) -> None:
    common.put(rows, row, CACHE)


def key(**kw) -> str:
    return json.dumps(kw, sort_keys=True)


# ------------------------------------------------------------------------------------- phases
PART = (0, 1)  # --part=i/k: this process runs the tables with index = i mod k


def _tables(quick: bool) -> list[str]:
    tables = list(TABLES)[:1] if quick else list(TABLES)
    return [t for j, t in enumerate(tables) if j % PART[1] == PART[0]]


def phase_tune(rows: dict, quick: bool) -> dict:
    """Bins per (table, peer): lowest W1 at ε = 1 on the tuning seed (in the peers' favour)."""
    tables = _tables(quick)
    jobs = []
    for name, peer in itertools.product(tables, TUNED):
        for k in bin_candidates(name, peer):
            kk = key(phase="tune", table=name, method=peer, eps=1.0, seed=TUNE_SEED, bins=k)
            if kk not in rows:
                jobs.append(dict(id=kk, table=name, synth=peer, epsilon=1.0, delta=DELTA, seed=TUNE_SEED, bins=k))
    if jobs:
        _run_and_store(rows, jobs, phase="tune")
    choice = {}
    for name, peer in itertools.product(tables, TUNED):
        cands = [rows[key(phase="tune", table=name, method=peer, eps=1.0, seed=TUNE_SEED, bins=k)]
                 for k in bin_candidates(name, peer)]
        cands = [c for c in cands if "w1" in c]
        if cands:
            choice[f"{name}|{peer}"] = min(cands, key=lambda c: c["w1"])["bins"]
        if peer == "mst" and f"{name}|mst" in choice:  # AIM models the same binned domain as MST
            choice[f"{name}|aim"] = choice[f"{name}|mst"]
    return choice


def _run_and_store(rows: dict, jobs: list[dict], *, phase: str) -> None:
    t0 = time.time()
    res = run_peers(jobs, RAW)
    print(f"{len(jobs)} peer runs in {time.time() - t0:.0f}s wall", flush=True)
    _store(rows, jobs, res, phase=phase)


def import_raw(rows: dict) -> None:
    """Store the raw releases of finished peer runs that are not in the cache yet (after a crash)."""
    if not RAW.exists():
        return
    res = {}
    for line in RAW.read_text().splitlines():
        try:
            r = json.loads(line)
            meta = json.loads(r["id"])
        except (ValueError, KeyError):
            continue  # an audit run, or a line cut by a crash
        if r["id"] not in rows and "Y" in r:
            res[r["id"]] = (r, meta)
    jobs = [dict(id=i, table=m["table"], synth=m["method"], epsilon=m["eps"], delta=DELTA, seed=m["seed"],
                 bins=m["bins"], phase=m["phase"]) for i, (r, m) in res.items()]
    for phase in ("tune", "run"):
        part = [j for j in jobs if j["phase"] == phase]
        if part:
            _store(rows, part, {j["id"]: res[j["id"]][0] for j in part}, phase=phase)
            print(f"imported {len(part)} {phase} runs from {RAW.name}", flush=True)


def _store(rows: dict, jobs: list[dict], res: dict, *, phase: str) -> None:
    for job in jobs:
        r = res.get(job["id"], {"error": "no result"})
        X, dom = table(job["table"])
        row = dict(key=job["id"], phase=phase, table=job["table"], d=dom.d, n=len(X), method=job["synth"],
                   variant="peer", eps=job["epsilon"], seed=job["seed"], bins=job["bins"],
                   delta=job["delta"] if job["synth"] != "mwem" else 0.0, versions=r.get("versions"))
        if "error" in r:
            row["error"] = r["error"]
        else:
            Y = jitter(np.asarray(r["Y"], float), dom, job["bins"], np.random.default_rng(job["seed"] + 7))
            row.update(cpu=r["cpu"], **metrics(X, Y, dom))
        put(rows, row)


def _ours_release(method: str, variant: str, X, dom, eps: float, seed: int):
    n, d = X.shape
    if variant == "default":  # the defaults since issue 27 (the study's rules), run as a user runs them
        kw = {"delta": DELTA} if method == "private_evolution" else {}
        rel = run(method, X, dom, epsilon=eps, rng=seed, **kw)
        return rel.synthetic, rel.delta
    if variant == "today":
        # the defaults before issue 27, run as a user ran them (rows of the cache recorded then); re-run from
        # HEAD with the earlier choices passed explicitly: the walk's grid_rule="log", low_dim's plan="paper",
        # and k^d ≈ εn for the histograms computed from the exact n (the mechanism computed it from its noisy n)
        kw = {"delta": DELTA} if method == "private_evolution" else {}
        if method == "haar_walk":
            kw = {"grid_rule": "log"}
        elif method == "low_dim":
            kw = {"plan": "paper"}
        elif method in ("flat_histogram", "psmm"):
            from dpsynth_core.grid import default_cells_per_axis

            cap = {"flat_histogram": 2**16, "psmm": 2**15}[method]
            kw = {"bins" if method == "flat_histogram" else "cells": default_cells_per_axis(n, 0.95 * eps, d,
                                                                                            cap_cells=cap)}
        rel = run(method, X, dom, epsilon=eps, rng=seed, **kw)
        return rel.synthetic, rel.delta
    # proposed rules, explicit values, n public
    if method == "low_dim":
        plan = defaults.low_dim_plan(n, eps, d)
        if not plan.project:
            rel = run(plan.mechanism, X, dom, epsilon=eps, neighbours="replace", rng=seed, cells=plan.cells)
            return rel.synthetic, 0.0
        Y, _ = low_dim_split(X, dom, epsilon=eps, split=plan.split, target_dim=plan.target_dim,
                             subroutine=plan.subroutine, rng=seed, box=plan.box)
        return Y, 0.0
    if method == "private_evolution":  # no proposed rule here: PE's defaults belong to its own study
        return None, None
    param = {"flat_histogram": ("bins", defaults.flat_histogram_bins), "psmm": ("cells", defaults.psmm_cells),
             "haar_walk": ("grid", defaults.haar_walk_grid), "pmm": ("depth", defaults.pmm_depth)}[method]
    rel = run(method, X, dom, epsilon=eps, rng=seed, n_public=n, **{param[0]: param[1](n, eps, d)})
    return rel.synthetic, rel.delta


VARIANTS = ("today", "rule", "default")  # --variant=<one of them> restricts phase "ours"
#: Version of the low_dim plan measured by the "rule" variant (2: PSMM's cells at ε/2 under replace).
PLAN_VERSION = 2
#: Version of PMM's depth rule measured by the "rule" and "default" variants (2: one level deeper than
#: Corollary 12 in d = 5, 6, from the extended defaults study; rows without it measured the rule before).
PMM_RULE_VERSION = 2


def phase_ours(rows: dict, quick: bool) -> None:
    tables = _tables(quick)
    for name in tables:
        X, dom = table(name)
        t0 = time.process_time()
        for eps, seed, method, variant in itertools.product(EPSILONS, SEEDS[:2] if quick else SEEDS, OURS,
                                                            VARIANTS):
            extra = {"plan": PLAN_VERSION} if (method, variant) == ("low_dim", "rule") else {}
            if method == "pmm" and variant in ("rule", "default"):
                extra = {"depth_rule": PMM_RULE_VERSION}
            kk = key(phase="run", table=name, method=method, variant=variant, eps=eps, seed=seed, **extra)
            if kk in rows:
                continue
            c0 = time.process_time()
            if (method, variant) == ("private_evolution", "default"):
                continue  # PE's defaults belong to its own study (a separate branch); "today" measures them
            Y, delta = _ours_release(method, variant, X, dom, eps, seed)
            if Y is None:
                continue
            cpu = time.process_time() - c0
            put(rows, dict(key=kk, phase="run", table=name, d=dom.d, n=len(X), method=method, variant=variant,
                           eps=eps, seed=seed, delta=delta, cpu=cpu, **extra, **metrics(X, Y, dom)))
        print(f"[ours] {name}: {time.process_time() - t0:.0f}s", flush=True)


#: The oracle phase: PMM's depth and PSMM's cells swept around the rule (n public, as the peers), to
#: ask whether ANY value of the parameter (chosen in hindsight, per table and ε) reaches the best peer.
ORACLE_SPAN = {"pmm": ("depth", defaults.pmm_depth, range(-3, 4)), "psmm": ("cells", defaults.psmm_cells, range(-2, 4))}


def phase_oracle(rows: dict, quick: bool) -> None:
    """W1 of PMM at depths rule-3..rule+3 and PSMM at cells rule-2..rule+3 (at least 2), n public, five seeds."""
    for name in _tables(quick):
        X, dom = table(name)
        n, d = X.shape
        t0 = time.process_time()
        for eps, method in itertools.product(EPSILONS, ("pmm", "psmm")):
            param, rule, span = ORACLE_SPAN[method]
            base = rule(n, eps, d)
            values = sorted({v for v in (base + s for s in span) if (v >= 2 if method == "psmm" else v >= 1)})
            if method == "psmm":
                values = [v for v in values if v**d <= 2**15]
            for v, seed in itertools.product(values, SEEDS[:2] if quick else SEEDS):
                kk = key(phase="oracle", table=name, method=method, eps=eps, seed=seed, **{param: v})
                if kk in rows:
                    continue
                c0 = time.process_time()
                rel = run(method, X, dom, epsilon=eps, rng=seed, n_public=n, **{param: v})
                cpu = time.process_time() - c0
                Y = rel.synthetic
                w = wasserstein1(X, Y, domain=dom, method="pot", return_result=True)
                put(rows, dict(key=kk, phase="oracle", table=name, d=d, n=n, method=method, eps=eps, seed=seed,
                               param=param, value=v, rule=base, cpu=cpu, w1=float(w.value), exact=bool(w.exact)))
        print(f"[oracle] {name}: {time.process_time() - t0:.0f}s", flush=True)


def oracle_summary(rows: dict, verdict: list[dict]) -> list[dict]:
    """Per (table, ε): the best value in hindsight of PMM's depth and PSMM's cells (lowest mean W1 over
    the seeds) and its ratio to the best peer: a lower bound on what any default of the two can reach."""
    runs = [r for r in rows.values() if r.get("phase") == "oracle"]
    out = []
    for v in verdict:
        cell = [r for r in runs if r["table"] == v["table"] and r["eps"] == v["eps"]]
        if not cell:
            continue
        means: dict = {}
        for r in cell:
            means.setdefault((r["method"], r["value"]), []).append(r["w1"])
        # the rules as they are now (a row records the rule of its day: the sweep around it may have moved)
        rules = {mm: ORACLE_SPAN[mm][1](cell[0]["n"], v["eps"], cell[0]["d"]) for mm in ORACLE_SPAN}
        (m, val), ws = min(means.items(), key=lambda kv: float(np.mean(kv[1])))
        rule = rules[m]
        se = float(np.std(ws, ddof=1) / math.sqrt(len(ws))) if len(ws) > 1 else float("nan")
        rule_w = {(mm, vv): float(np.mean(w)) for (mm, vv), w in means.items() if vv == rules[mm]}
        out.append(dict(table=v["table"], d=v["d"], eps=v["eps"], best_peer=v["best_peer"],
                        best_peer_w1=v["best_peer_w1"], oracle_method=m, oracle_param=ORACLE_SPAN[m][0],
                        oracle_value=val, rule_value=rule, oracle_w1=float(np.mean(ws)), oracle_w1_se=se,
                        seeds=len(ws), values_tried=len(means), oracle_ratio=float(np.mean(ws)) / v["best_peer_w1"],
                        rule_w1={f"{mm} ({ORACLE_SPAN[mm][0]} {rr})": w for (mm, rr), w in rule_w.items()}))
    return out


def phase_peers(rows: dict, quick: bool, bins: dict) -> None:
    tables = _tables(quick)
    for name in tables:
        jobs = []
        for peer, eps in itertools.product(PEERS, EPSILONS):
            k = bins.get(f"{name}|{peer}")
            for seed in (PEER_SEEDS[peer][:2] if quick else PEER_SEEDS[peer]) if k is not None else ():
                kk = key(phase="run", table=name, method=peer, variant="peer", eps=eps, seed=seed, bins=k)
                if kk not in rows:
                    jobs.append(dict(id=kk, table=name, synth=peer, epsilon=eps, delta=DELTA, seed=seed, bins=k))
        if jobs:
            # seeds 0-1 of every (peer, ε) first, then seed 2, then 3-4: an interrupted run leaves balanced cells
            jobs.sort(key=lambda j: (min(j["seed"], 2), PEERS.index(j["synth"]) if j["seed"] < 2 else 0, j["seed"]))
            print(f"[peers] {name}: {len(jobs)} runs", flush=True)
            _run_and_store(rows, jobs, phase="run")


# ----------------------------------------------------------------------------------- marginals
#: The marginal tables (issue 34) in two conventions, both add/remove with δ = 1e-5: the peers' (n declared
#: public, as AIM and MST use the exact n) and the project's default (no n_public: the size is read off the
#: tables' noisy totals, and 5% of ε buys a noisy n for the default rules); and "auto" (dpsynth's choice for the
#: table's public shape, δ = 1e-5 given); ten seeds (MARGINALS_SEEDS).
MARGINALS_VARIANTS = ("peers", "default", "auto")
#: Version of the marginals mechanism's defaults the rows measured (bumped when dpsynth_core.defaults' marginals
#: rules change; older rows are left out of the summary). 3: the fine bins of the default rule are a multiple of the
#: coarse bins (``defaults.marginals_align``); 4: at least twice the coarse bins where the rules gave more fine than
#: coarse bins (it changes only diabetes:2's bins here, the other tables' releases are those of 3 bit for bit).
MARGINALS_RULE_VERSION = 4
#: Seeds of the marginal tables' rows: ten (a release takes a tenth of a second; on these tables of a few hundred
#: rows five seeds leave a standard error of 2-8 % of W1, as large as the differences the acceptance asks about).
MARGINALS_SEEDS = tuple(range(10))


def _marginals_release(variant: str, X, dom: Domain, eps: float, seed: int):
    if variant == "peers":
        return run("marginals", X, dom, epsilon=eps, delta=DELTA, n_public=len(X), rng=seed)
    if variant == "default":
        return run("marginals", X, dom, epsilon=eps, delta=DELTA, rng=seed)
    return run("auto", X, dom, epsilon=eps, delta=DELTA, rng=seed)


def phase_marginals(rows: dict, quick: bool) -> None:
    for name in _tables(quick):
        X, dom = table(name)
        t0 = time.process_time()
        for eps, seed, variant in itertools.product(EPSILONS, MARGINALS_SEEDS[:2] if quick else MARGINALS_SEEDS,
                                                    MARGINALS_VARIANTS):
            kk = key(phase="run", table=name, method="marginals", variant=variant, eps=eps, seed=seed,
                     rule=MARGINALS_RULE_VERSION)
            if kk in rows:
                continue
            c0 = time.process_time()
            rel = _marginals_release(variant, X, dom, eps, seed)
            cpu = time.process_time() - c0
            put(rows, dict(key=kk, phase="run", table=name, d=dom.d, n=len(X), method="marginals", variant=variant,
                           eps=eps, seed=seed, delta=rel.delta, cpu=cpu, rule=MARGINALS_RULE_VERSION, **when(),
                           chosen=rel.mechanism, bound=rel.bound, **metrics(X, rel.synthetic, dom)))
        print(f"[marginals] {name}: {time.process_time() - t0:.0f}s", flush=True)


def when() -> dict:
    """The time a row was measured and the 1-minute load average then (the machine is shared)."""
    return {"date": time.strftime("%Y-%m-%d %H:%M"), "load": round(os.getloadavg()[0], 2)}


def marginals_rows_note(rows: list[dict]) -> dict:
    """Which marginals rows the summary holds: their rule version, seeds, when they were measured and the load."""
    mine = [r for r in rows if r.get("rule") == MARGINALS_RULE_VERSION]
    dates = sorted(r["date"] for r in mine if "date" in r)
    loads = [r["load"] for r in mine if "load" in r]
    return {"rule": MARGINALS_RULE_VERSION, "rows": len(mine), "seeds": len(MARGINALS_SEEDS),
            "measured": [dates[0], dates[-1]] if dates else None,
            "load_average_1min": [min(loads), max(loads)] if loads else None,
            "note": "only the marginal tables' rows were re-run at this rule version (the peers' and the other "
                    "mechanisms' rows are those of the earlier runs, unchanged); W1 and the marginal errors do not "
                    "depend on the load, the CPU seconds do"}


def marginals_verdict(table_rows: list[dict]) -> dict:
    """Per (table, ε) and variant: W1, 1-way and 2-way errors over the best peer's (by W1 for W1; the best peer
    value of each error for the errors), and the acceptance of issue 34 on the tables with d >= 3."""
    by = {(t["table"], t["eps"], t["method"]): t for t in table_rows}
    cells, accept = [], {}
    for name, eps in sorted({(t["table"], t["eps"]) for t in table_rows}):
        peers = [by[(name, eps, p)] for p in PEERS if (name, eps, p) in by]
        if not peers:
            continue
        bp = min(peers, key=lambda t: t["w1"])
        for variant in MARGINALS_VARIANTS:
            m = by.get((name, eps, f"marginals ({variant})"))
            if m is None:
                continue
            cells.append(dict(table=name, d=m["d"], eps=eps, variant=variant, seeds=m["seeds"], best_peer=bp["method"],
                              w1=m["w1"], w1_se=m["w1_se"], peer_w1=bp["w1"], w1_ratio=m["w1"] / bp["w1"],
                              marg1_ratio=m["marg1"] / min(p["marg1"] for p in peers),
                              marg2_ratio=m["marg2"] / min(p["marg2"] for p in peers), cpu=m["cpu"],
                              peer_cpu=bp["cpu"]))
    for variant in ("peers", "default"):
        part = [c for c in cells if c["variant"] == variant and c["d"] >= 3]
        if not part:
            continue
        geo = {f: float(np.exp(np.mean(np.log([c[f] for c in part])))) for f in ("w1_ratio", "marg1_ratio", "marg2_ratio")}
        worst = max(part, key=lambda c: c["w1_ratio"])
        accept[variant] = {"cells": len(part), "max_w1_ratio": worst["w1_ratio"], "worst_cell": f"{worst['table']} "
                           f"ε={worst['eps']:g}", "geo_mean": geo,
                           "w1_every_cell": all(c["w1_ratio"] <= (1.0 if variant == "peers" else 1.05) for c in part)}
    return {"cells": cells, "acceptance": accept}


# --------------------------------------------------------------------------------------- audit
AUDIT_TABLES: dict = {}


def _replay_audit(samples: dict, D, Dp, statistic, *, epsilon: float, delta: float, trials: int, thresholds=None):
    """dpsynth_core.audit.audit on releases computed beforehand in the peers' environment.

    ``samples[0]`` are the releases on D, ``samples[1]`` on D' (in trial order); the audit's mechanism
    returns them in turn (it calls D's runs first, then D''s)."""
    from dpsynth_core.audit import audit

    queue = {0: list(samples[0]), 1: list(samples[1])}

    def mechanism(X, rng):
        which = 0 if X.shape == D.shape and np.array_equal(X, D) else 1
        return queue[which].pop(0)

    return audit(mechanism, D, Dp, statistic=statistic, trials=trials, epsilon=epsilon, delta=delta, rng=0,
                 thresholds=thresholds)


def phase_audit(quick: bool) -> dict:
    """Two neighbouring pairs on diabetes (d = 2, declared box bmi 10..60, target 0..400):

    * move: one record moved to the box's upper corner (60, 400) -- a replace pair (and two steps
      under add/remove). Statistic: the number of synthetic rows in the top bin of both columns.
      A synthesizer that keeps to its declared bounds may put rows there for D and D' alike; one that
      reads the data's range cannot for D (no record near the corner).
    * add: one record added (a copy of row 0) -- an add/remove pair. Statistic: the number of rows
      released. A synthesizer that releases exactly n rows separates D and D' with certainty.
    """
    from dpsynth_core.audit import neighbouring_pair

    X, dom = table("diabetes:2")
    eps = 0.1  # small, so that the audit's 20 trials per dataset can show a violation when there is one
    trials = 20
    corner = dom.upper_array.copy()
    Dm, Dmp = neighbouring_pair(X, "move", point=corner, index=0)
    Da, Dap = neighbouring_pair(X, "add", index=0)
    AUDIT_TABLES.update({"audit_move_D": (Dm, dom), "audit_move_Dp": (Dmp, dom), "audit_add_D": (Da, dom),
                         "audit_add_Dp": (Dap, dom)})
    bins = 8  # MST's and MWEM's choice on this table (tuning), and a fast MWEM run
    top = dom.upper_array - (dom.upper_array - dom.lower_array) / bins
    out = {}
    # MST and AIM release exactly n rows by construction (``num_rows = len(data)``, read in the code and
    # seen in every run of the benchmark, ``m`` in peers.jsonl); the audit of that leak is left out for
    # the machine's CPU budget
    plan = [("mwem", "move", trials)]
    for peer, kind, tr in plan:
        names = (f"audit_{kind}_D", f"audit_{kind}_Dp")
        jobs = [dict(id=f"{peer}|{kind}|{w}|{s}", table=names[w], synth=peer, epsilon=eps, delta=DELTA, seed=5000 + s,
                     bins=bins) for w in (0, 1) for s in range(tr)]
        t0 = time.time()
        done = {}
        if AUDIT_RAW.exists():  # releases of an interrupted audit (same ids, same seeds)
            for line in AUDIT_RAW.read_text().splitlines():
                r = json.loads(line)
                if "Y" in r:
                    done[r["id"]] = r
        todo = [j for j in jobs if j["id"] not in done]
        res = {**done, **(run_peers(todo, AUDIT_RAW) if todo else {})}
        samples = {w: [np.asarray(res[f"{peer}|{kind}|{w}|{s}"]["Y"], float) for s in range(tr)] for w in (0, 1)}
        D, Dp = (Dm, Dmp) if kind == "move" else (Da, Dap)
        if kind == "move":
            def stat(Y):
                return float(np.sum(np.all(Y >= top, axis=1)))
            res_a = _replay_audit(samples, D, Dp, stat, epsilon=2 * eps, delta=DELTA, trials=tr, thresholds=[0.5])
            what = "rows in the top bin of both columns (bmi >= 53.75, target >= 350)"
        else:
            def stat(Y):
                return float(len(Y))
            res_a = _replay_audit(samples, D, Dp, stat, epsilon=eps, delta=DELTA, trials=tr,
                                  thresholds=[len(D) + 0.5])
            what = "number of rows released"
        out[f"{peer}|{kind}"] = {"pair": kind, "statistic": what, "declared_epsilon": res_a.epsilon_declared, "delta": DELTA if peer != "mwem" else 0.0,
                                 "trials": tr, "bins": bins, "result": res_a.to_dict(), "summary": res_a.summary(),
                                 "mean_statistic_D": float(np.mean(res_a.samples_D)),
                                 "mean_statistic_D_prime": float(np.mean(res_a.samples_D_prime)),
                                 "wall_seconds": time.time() - t0}
        print(peer, kind, res_a.summary(), flush=True)
    # the same audits on dpsynth's PMM (declared bounds only; add/remove: the size is noisy)
    from dpsynth_core.audit import from_registry

    for kind, D, Dp in (("move", Dm, Dmp), ("add", Da, Dap)):
        mech = from_registry("pmm", dom, epsilon=eps)
        if kind == "move":
            def stat(rel):
                return float(np.sum(np.all(rel.synthetic >= top, axis=1)))
            thr = [0.5]
        else:
            def stat(rel):
                return float(len(rel.synthetic))
            thr = [len(D) + 0.5]
        eps_pair = 2 * eps if kind == "move" else eps  # PMM's default relation is add/remove: a move is 2ε
        res_a = _audit_direct(mech, D, Dp, stat, eps_pair, 100 if not quick else 40, thr)
        out[f"pmm|{kind}"] = {"pair": kind, "declared_epsilon": eps_pair, "trials": res_a.trials, "result": res_a.to_dict(),
                              "summary": res_a.summary()}
        print("pmm", kind, res_a.summary(), flush=True)
    return out


def audit_range() -> dict:
    """A second statistic on MWEM's releases of the move pair (replayed from AUDIT_RAW, no new run):
    the number of rows with bmi in bins 6-7 of the 8 on the declared 10..60, i.e. above every bmi of D.
    MWEM builds its histogram on the observed range of each (binned) column, so on D it can never put a
    row there. Two statistics were tried on the same releases: the test uses α = 0.05 / 2 (Bonferroni)."""
    from dpsynth_core.audit import audit, neighbouring_pair

    X, dom = table("diabetes:2")
    D, Dp = neighbouring_pair(X, "move", point=dom.upper_array.copy(), index=0)
    raw = {}
    for line in AUDIT_RAW.read_text().splitlines():
        r = json.loads(line)
        if "Y" in r:
            raw[r["id"]] = np.asarray(r["Y"], float)
    trials = 20
    queue = {w: [raw[f"mwem|move|{w}|{s}"] for s in range(trials)] for w in (0, 1)}

    def mechanism(Xa, rng):
        return queue[0 if np.array_equal(Xa, D) else 1].pop(0)

    cut = dom.lower_array[0] + 6 * (dom.upper_array[0] - dom.lower_array[0]) / 8
    res = audit(mechanism, D, Dp, statistic=lambda Y: float(np.sum(Y[:, 0] >= cut)), trials=trials, epsilon=0.2,
                delta=DELTA, rng=0, thresholds=[0.5], alpha=0.025)
    return {"pair": "move", "statistic": f"rows with bmi >= {cut:g} (above every bmi of D, largest {X[:, 0].max():g})",
            "declared_epsilon": 0.2, "alpha": 0.025, "trials": trials, "result": res.to_dict(), "summary": res.summary(),
            "runs_with_rows_there_D": int((res.samples_D > 0).sum()),
            "runs_with_rows_there_D_prime": int((res.samples_D_prime > 0).sum()),
            "mean_rows_there_D": float(res.samples_D.mean()), "mean_rows_there_D_prime": float(res.samples_D_prime.mean())}


def _audit_direct(mech, D, Dp, stat, eps, trials, thresholds):
    from dpsynth_core.audit import audit

    return audit(mech, D, Dp, statistic=stat, trials=trials, epsilon=eps, rng=0, thresholds=thresholds)


# ----------------------------------------------------------------------------------- summarise
def summarise(rows: dict, bins: dict, audit_out: dict | None) -> dict:
    runs = [r for r in rows.values() if r.get("phase") == "run" and "w1" in r
            and not ((r["method"], r["variant"]) == ("low_dim", "rule") and r.get("plan") != PLAN_VERSION)
            and not (r["method"] == "marginals" and r.get("rule") != MARGINALS_RULE_VERSION)
            and not (r["method"] == "pmm" and r["variant"] in ("rule", "default")
                     and r.get("depth_rule") != PMM_RULE_VERSION)]
    groups: dict = {}
    for r in runs:
        label = r["method"] if r["variant"] == "peer" else f"{r['method']} ({r['variant']})"
        groups.setdefault((r["table"], r["eps"], label), []).append(r)
    table_rows = []
    for (name, eps, label), rs in sorted(groups.items()):
        def mse(field, rs=rs):
            a = np.array([r[field] for r in rs], float)
            return float(np.nanmean(a)), (float(np.nanstd(a, ddof=1) / math.sqrt(len(a))) if len(a) > 1
                                          else float("nan"))
        w1, w1_se = mse("w1")
        m1, m1_se = mse("marg1")
        m2, m2_se = mse("marg2")
        r2, _ = mse("tstr_r2")
        table_rows.append(dict(table=name, d=rs[0]["d"], n=rs[0]["n"], eps=eps, method=label, seeds=len(rs), w1=w1,
                               w1_se=w1_se, marg1=m1, marg1_se=m1_se, marg2=m2, marg2_se=m2_se, tstr_r2=r2,
                               cpu=float(np.mean([r["cpu"] for r in rs])), m=float(np.mean([r["m"] for r in rs])),
                               delta=rs[0].get("delta"), bins=rs[0].get("bins"), exact=all(r["exact"] for r in rs)))
    # who wins: best peer vs best of PMM/PSMM (today and rules)
    verdict = []
    for name, eps in sorted({(t["table"], t["eps"]) for t in table_rows}):
        part = {t["method"]: t for t in table_rows if t["table"] == name and t["eps"] == eps}
        peers = {m: t for m, t in part.items() if m in PEERS}
        if not peers:
            continue
        bp = min(peers, key=lambda m: peers[m]["w1"])
        entry = dict(table=name, d=part[bp]["d"], eps=eps, best_peer=bp, best_peer_w1=peers[bp]["w1"],
                     best_peer_marg1=min(p["marg1"] for p in peers.values()),
                     best_peer_marg2=min(p["marg2"] for p in peers.values()),
                     best_peer_cpu=peers[bp]["cpu"])
        for variant in ("today", "rule", "default"):
            ours = {m: part[f"{m} ({variant})"] for m in ("pmm", "psmm") if f"{m} ({variant})" in part}
            if ours:
                bo = min(ours, key=lambda m: ours[m]["w1"])
                entry[f"best_pmm_psmm_{variant}"] = bo
                entry[f"best_pmm_psmm_{variant}_w1"] = ours[bo]["w1"]
                entry[f"ratio_{variant}"] = ours[bo]["w1"] / peers[bp]["w1"]
                entry[f"cpu_{variant}"] = ours[bo]["cpu"]
        allm = {m: t for m, t in part.items()}
        entry["best_overall"] = min(allm, key=lambda m: allm[m]["w1"])
        verdict.append(entry)
    ceil = {name: real_ceiling(table(name)[0]) for name in sorted({t["table"] for t in table_rows})}
    versions = next((r.get("versions") for r in rows.values() if r.get("versions")), None)
    return {"table": table_rows, "verdict": verdict, "oracle": oracle_summary(rows, verdict), "bins": bins, "tstr_real_ceiling": ceil, "versions": versions,
            "audit": audit_out, "marginals": marginals_verdict(table_rows),
            "marginals_rows": marginals_rows_note([r for r in runs if r["method"] == "marginals"]),
            "auto_choice": {f"{r['table']}|{r['eps']:g}": r["chosen"] for r in runs
                            if r["method"] == "marginals" and r["variant"] == "auto"}}


def plot(summary: dict) -> str | None:
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    IMG.mkdir(parents=True, exist_ok=True)
    tables = sorted({t["table"] for t in summary["table"]}, key=lambda s: (int(s.split(":")[1]), s))
    # dpsynth at its defaults since issue 27 (the study's rules), run as a user runs them; PE as it was measured
    methods = ["aim", "mst", "mwem", "pmm (default)", "psmm (default)", "flat_histogram (default)",
               "haar_walk (default)", "low_dim (default)", "private_evolution (today)", "marginals (default)"]
    fig, axes = plt.subplots(1, len(tables), figsize=(2.9 * len(tables), 4.6), sharey=False)
    handles = {}
    for ax, name in zip(axes, tables, strict=True):
        for j, m in enumerate(methods):
            pts = sorted((t["eps"], t["w1"], t["w1_se"]) for t in summary["table"] if t["table"] == name and t["method"] == m)
            if pts:
                e, w, s = zip(*pts, strict=True)
                mine = m.startswith("marginals")
                h = ax.errorbar(e, w, yerr=s, marker="os^"[j] if j < 3 else "D" if mine else "x",
                                ls="--" if j < 3 else "-", color="black" if mine else f"C{j}", ms=5,
                                lw=1.8 if mine else 1.2 if j < 3 else 1)
                handles[m] = h
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(list(EPSILONS), [f"{e:g}" for e in EPSILONS])
        ax.minorticks_off()
        ax.set_title(name.replace(":", ", d = "), fontsize=10)
        ax.set_xlabel("ε")
    axes[0].set_ylabel("W1 (unit cube, l_inf), mean over seeds")
    fig.legend([handles[m] for m in methods if m in handles], [m for m in methods if m in handles],
               loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    path = IMG / "peers_w1.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    phases = [a for a in argv if not a.startswith("--")] or ["tune", "peers", "ours", "audit", "summarise"]
    global CACHE, PART, VARIANTS
    for a in argv:
        if a.startswith("--variant="):
            VARIANTS = (a.split("=")[1],)
        if a.startswith("--part="):
            i, k = a.split("=")[1].split("/")
            PART = (int(i), int(k))
    if quick:
        CACHE = RESULTS / "peers_quick.jsonl"
    rows = load_cache()
    import_raw(rows)
    bins = phase_tune(rows, quick) if any(p in phases for p in ("tune", "peers", "summarise")) else {}
    print("bins in the peers' favour:", bins, flush=True)
    if "peers" in phases:
        phase_peers(rows, quick, bins)
    if "ours" in phases:
        phase_ours(rows, quick)
    if "oracle" in phases:
        phase_oracle(rows, quick)
    if "marginals" in phases:
        phase_marginals(rows, quick)
    audit_path = RESULTS / ("peers_audit_quick.json" if quick else "peers_audit.json")
    audit_out = json.loads(audit_path.read_text()) if audit_path.exists() else None
    if "audit" in phases:
        audit_out = phase_audit(quick)
        audit_path.write_text(json.dumps(audit_out, indent=1, default=float))
    if ("audit" in phases or "audit_range" in phases) and AUDIT_RAW.exists() and audit_out is not None:
        audit_out["mwem|move|range"] = audit_range()
        print(audit_out["mwem|move|range"]["summary"], flush=True)
        audit_path.write_text(json.dumps(audit_out, indent=1, default=float))
    if "summarise" in phases:
        summary = summarise(rows, bins, audit_out)
        payload = {"machine": machine(), "description": __doc__, **summary}
        (RESULTS / ("peers_quick.json" if quick else "peers.json")).write_text(json.dumps(payload, indent=1, default=float))
        print("wrote", RESULTS / "peers.json", "plot:", plot(summary))
        for v in summary["verdict"]:
            print(json.dumps(v))


if __name__ == "__main__":
    main(sys.argv[1:])


def markdown(summary: dict) -> str:
    """The peers table of docs/defaults.md from the summary JSON: per table and ε, W1 and the 1-/2-way
    marginal errors (mean over seeds) of the best peer and of the best of PMM/PSMM (today's defaults
    and the proposed rules), the TSTR R^2 and CPU seconds."""
    out = ["| table | ε | best peer (bins, seeds) | W1 | 1-way | 2-way | CPU s | PMM/PSMM today: W1 | 1-way | 2-way | CPU s "
           "| PMM/PSMM rules: W1 | W1 ratio to best peer (today, rules) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = {(t["table"], t["eps"], t["method"]): t for t in summary["table"]}
    for v in summary["verdict"]:
        p = rows[(v["table"], v["eps"], v["best_peer"])]
        t = rows.get((v["table"], v["eps"], f"{v.get('best_pmm_psmm_today')} (today)"))
        r = rows.get((v["table"], v["eps"], f"{v.get('best_pmm_psmm_rule')} (rule)"))
        if t is None or r is None:
            continue
        out.append(f"| {v['table']} | {v['eps']:g} | {v['best_peer'].upper()} ({p['bins']}, {p['seeds']}) | {p['w1']:.4f} ± {p['w1_se']:.4f} "
                   f"| {p['marg1']:.3f} | {p['marg2']:.3f} | {p['cpu']:.2f} | {t['w1']:.4f} ± {t['w1_se']:.4f} "
                   f"({v['best_pmm_psmm_today']}) | {t['marg1']:.3f} | {t['marg2']:.3f} | {t['cpu']:.3f} | "
                   f"{r['w1']:.4f} ({v['best_pmm_psmm_rule']}) | {v['ratio_today']:.2f}, {v['ratio_rule']:.2f} |")
    return "\n".join(out)


def markdown_all(summary: dict, table_name: str, eps: float) -> str:
    """Every method on one (table, ε): W1, marginal errors, TSTR R^2, CPU, rows released."""
    out = ["| method | seeds | W1 | 1-way | 2-way | TSTR R² | CPU s | rows |", "|---|---|---|---|---|---|---|---|"]
    for t in sorted((t for t in summary["table"] if t["table"] == table_name and t["eps"] == eps), key=lambda t: t["w1"]):
        out.append(f"| {t['method']} | {t['seeds']} | {t['w1']:.4f} ± {t['w1_se']:.4f} | {t['marg1']:.3f} | {t['marg2']:.3f} | "
                   f"{t['tstr_r2']:.2f} | {t['cpu']:.3f} | {t['m']:.0f} |")
    return "\n".join(out)

"""Mixed tables (numeric + categorical columns): dpsynth's mechanisms against smartnoise-synth's AIM and MST.

Issue 26 asks: on the bundled mixed table and on one more public mixed table, W1 under the mixed metric
and the 1-/2-way marginal errors of the mechanisms that take categorical columns, against AIM and MST
with the same declared bounds and categories, at ε = 0.3, 1, 3.

Tables (bounds and categories are public inputs written here, never read off the data)
    * ``clinic``: the bundled table (``dpsynth_core.datasets.clinic()``, 2000 generated patients; its
      own declared domain): numeric age, bmi, systolic_bp; categorical sex (2), region (4), diabetes (2).
    * ``penguins``: the Palmer penguins (Gorman, Williams, Fraser 2014), a real public table read from the
      ``palmerpenguins`` package (PyPI, installed into the peers' environment; its CSV file is read here):
      categorical species (Adelie, Chinstrap, Gentoo), island (Biscoe, Dream, Torgersen), sex (female,
      male); numeric bill length [25, 65] mm, bill depth [10, 25] mm, flipper length [160, 240] mm,
      body mass [2000, 7000] g (round ranges for the three Pygoscelis species; the categories are the
      study's species, islands and sexes). The 11 rows with a missing value are dropped (333 rows);
      ``year`` is left out.

Mechanisms
    dpsynth: ``pmm``, ``psmm``, ``flat_histogram``, ``sparse_marginals`` and ``private_evolution`` (only
    if it takes categorical columns in this checkout; otherwise skipped with a printed note), at their
    defaults (default relation add/remove, a noisy n; private_evolution with δ = DELTA).
    Peers: smartnoise-synth's AIM and MST in the peers' own environment (``bench_peers.ensure_venv``,
    ``bench_peers.run_peers``; ``benchmarks/peers/worker.py``), δ = DELTA = ``bench_peers.DELTA``
    (1e-5; smartnoise's default is 1e-9). Every column goes through smartnoise's ``BinTransformer`` with
    declared bounds, so no budget is spent on bounds and nothing is read off the data: a numeric column
    with ``b`` equal bins of its declared range, a categorical column with one bin per declared category
    (its codes 0..K-1 on [-0.5, K-0.5]): to AIM and MST that column is a discrete attribute whose
    domain is exactly the declared category list. (smartnoise's ``LabelTransformer`` would read the
    categories off the data, which the project's rules forbid.) ``b`` is chosen in the peers' favour:
    the value of BIN_CANDIDATES with the lowest mixed W1 for MST at ε = 1 on a separate tuning seed
    (100), a non-private choice that only helps them; AIM takes MST's. Numeric values released as bin
    midpoints are jittered uniformly inside their bin (``bench_peers.jitter``). AIM and MST release
    exactly n rows (``num_rows = len(data)``; docs/defaults.md), which leaks n: not charged here.
    Seeds: dpsynth 5 (0-4), AIM and MST 3 (0-2; the machine's CPU budget).

    The peers' rows and private-pgm's rounding. AIM and MST draw their rows with private-pgm's
    ``MarkovRandomField.synthetic_data(method="round")`` (mbi 1.1.0): each column after the first is
    filled by stratified rounding, the row's stratum being its rank within its group of parent values
    in row order. Two columns that the model keeps conditionally independent are then both monotone in
    the row index inside their groups, so the released table carries dependences the model does not
    have (seen here: diabetes "yes" piled onto the last region codes and onto men). It is what a user of
    smartnoise-synth gets, so it is the peers' main entry; the variant "aim:sample" / "mst:sample" (the
    worker's ``mbi_method="sample"``: the same fitted model, rows drawn i.i.d.) shows the model
    without that artefact, with its own bins tuned the same way (seeds: VARIANT_SEEDS). The verdict
    compares us with the best of both, in the peers' favour.

Metrics (owner view: computed against the real table)
    * W1 under the mixed metric ``max(||u_x - u_y||_inf, max_j w_j [c_xj != c_yj])`` on unit
      coordinates (unit weights): exact, dense POT (``ot.emd2``) on the full mixed cost matrix
      (``dpsynth_core.transport.marginals.mixed_cost``), no subsampling (n <= 2000 per side); the same
      value as the library's ``wasserstein1(X, Y, domain=dom, method="pot")`` (tests/bench);
    * 1-way / 2-way marginal error: total variation (half the L1 distance) between the real and the
      synthetic normalised histograms of each column (1-way) or each pair of columns (2-way), averaged;
      a categorical column's cells are its declared categories, a numeric column's are EVAL_BINS equal
      bins of its declared range; 0 = identical, 1 = disjoint;
    * CPU: process seconds of the release (ours) or of fit + sample (the peers' worker, JAX included).

Results: ``benchmarks/results/mixed.jsonl`` (one line per run; resumable) and
``benchmarks/results/mixed.json`` (summary, versions, δ); plot ``docs/img/mixed_w1.png``. Usage::

    nice -n 10 .venv/bin/python benchmarks/bench_mixed.py [tune] [peers] [ours] [variant] [marginals] [summarise] [--quick]

The marginal tables (issue 34, ``phase_marginals``): in the peers' convention (n public, δ = DELTA), the
project's default (noisy n, δ = DELTA) and through ``auto``, ten seeds (``bench_peers.MARGINALS_SEEDS``); the summary's ``"marginals"`` gives
their ratios to the best peer per (table, ε).
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import bench_peers  # noqa: E402
from benchmarks.common import RESULTS, load_cache, machine, put  # noqa: E402
from dpsynth_core import Domain, run  # noqa: E402
from dpsynth_core.transport.marginals import mixed_cost  # noqa: E402

CACHE = RESULTS / "mixed.jsonl"
SUMMARY = RESULTS / "mixed.json"
IMG = ROOT / "docs" / "img"
TABLES = ("clinic", "penguins")
EPSILONS = (0.3, 1.0, 3.0)
SEEDS = (0, 1, 2, 3, 4)
PEER_SEEDS = {"mst": (0, 1, 2), "aim": (0, 1, 2)}
#: The peers again with private-pgm drawing rows i.i.d. from the fitted model (``synthetic_data(method=
#: "sample")``) instead of its default stratified rounding (see the module's docstring): label "aim:sample".
VARIANT = "sample"
#: Seeds of that variant.
VARIANT_SEEDS = {"mst": (0, 1, 2), "aim": (0, 1, 2)}
TUNE_SEED = 100
DELTA = bench_peers.DELTA
PEERS = ("aim", "mst")
OURS = ("pmm", "psmm", "flat_histogram", "sparse_marginals", "private_evolution")
BIN_CANDIDATES = (4, 8, 16)
EVAL_BINS = 10

#: The Palmer penguins' public domain, declared here (see the module's docstring).
PENGUIN_COLUMNS = ("species", "island", "bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex")
PENGUIN_BOUNDS = {"bill_length_mm": (25.0, 65.0), "bill_depth_mm": (10.0, 25.0),
                  "flipper_length_mm": (160.0, 240.0), "body_mass_g": (2000.0, 7000.0)}
PENGUIN_CATEGORIES = {"species": ("Adelie", "Chinstrap", "Gentoo"), "island": ("Biscoe", "Dream", "Torgersen"),
                      "sex": ("female", "male")}


# ---------------------------------------------------------------------------------------- tables
def penguins_csv() -> Path:
    """The CSV file shipped in the ``palmerpenguins`` package of the peers' environment (installed from
    ``benchmarks/peers/requirements-nodeps.txt`` when missing)."""
    bench_peers.ensure_venv()
    probe = [str(bench_peers.PY), "-c",
             "import importlib.resources as r, palmerpenguins; print(r.files('palmerpenguins') / 'data' / 'penguins.csv')"]
    got = subprocess.run(probe, capture_output=True, text=True)
    if got.returncode != 0:
        subprocess.run([str(bench_peers.PY), "-m", "pip", "install", "--quiet", "--no-deps", "-r",
                        str(bench_peers.PEERS_DIR / "requirements-nodeps.txt")], check=True)
        got = subprocess.run(probe, capture_output=True, text=True, check=True)
    return Path(got.stdout.strip())


def penguins_domain() -> Domain:
    num = [c for c in PENGUIN_COLUMNS if c in PENGUIN_BOUNDS]
    return Domain([PENGUIN_BOUNDS[c][0] for c in num], [PENGUIN_BOUNDS[c][1] for c in num],
                  names=PENGUIN_COLUMNS, categories=PENGUIN_CATEGORIES)


def load_table(name: str) -> tuple[np.ndarray, Domain]:
    """Encoded rows (numbers, and category indices in the declared lists) and the declared domain."""
    if name == "clinic":
        from dpsynth_core.datasets import clinic

        ds = clinic()
        return np.asarray(ds.X, float), ds.domain
    if name == "penguins":
        frame = pd.read_csv(penguins_csv())[list(PENGUIN_COLUMNS)].dropna().reset_index(drop=True)
        dom = penguins_domain()
        return dom.read(frame, name="penguins", owner="bench_mixed"), dom
    raise ValueError(f"unknown table {name!r}")


_TABLES: dict = {}


def table(name: str) -> tuple[np.ndarray, Domain]:
    if name not in _TABLES:
        _TABLES[name] = load_table(name)
    return _TABLES[name]


# ------------------------------------------------------------------------------- peers' encoding
def peer_columns(dom: Domain, bins: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Per column: the lower and upper ends and the number of bins given to smartnoise's BinTransformer.
    Numeric: the declared range in ``bins`` equal bins; categorical: one bin per declared category
    (codes 0..K-1 on [-0.5, K-0.5], so each bin's midpoint is its code)."""
    lo, hi, nb = np.zeros(dom.d), np.zeros(dom.d), [0] * dom.d
    for j, i in enumerate(dom.numeric_index):
        lo[i], hi[i], nb[i] = dom.lower[j], dom.upper[j], int(bins)
    for i, size in zip(dom.categorical_index, dom.category_sizes, strict=True):
        lo[i], hi[i], nb[i] = -0.5, size - 0.5, int(size)
    return lo, hi, nb


def decode_peer(Y: np.ndarray, dom: Domain, bins: int, rng: np.random.Generator) -> np.ndarray:
    """A peer's released rows (bin midpoints) -> encoded rows: numeric midpoints jittered uniformly inside
    their bin of the declared range (``bench_peers.jitter``), categorical midpoints rounded to their code."""
    Y = np.array(Y, dtype=float)
    num, cat = dom.numeric_index, dom.categorical_index
    Y[:, num] = bench_peers.jitter(Y[:, num], Domain(list(dom.lower), list(dom.upper)), bins, rng)
    sizes = np.asarray(dom.category_sizes, float)
    Y[:, cat] = np.clip(np.rint(Y[:, cat]), 0, sizes - 1)
    return Y


# ------------------------------------------------------------------------------------- metrics
def column_weights(dom: Domain) -> np.ndarray:
    """``mixed_cost``'s weights in the encoded column order: 0 for a numeric column, w_j for a categorical one."""
    w = np.zeros(dom.d)
    for i, col in zip(dom.categorical_index, dom.categories, strict=True):
        w[i] = dom.weight(col)
    return w


def mixed_w1(U: np.ndarray, V: np.ndarray, weights: np.ndarray) -> tuple[float, bool]:
    """Exact W1 between the uniform measures on the rows of U and V (encoded unit coordinates) under the
    mixed metric: POT's network simplex on the dense cost matrix. Returns (value, converged)."""
    import ot

    M = mixed_cost(U, V, weights)
    a = np.full(len(U), 1.0 / len(U))
    b = np.full(len(V), 1.0 / len(V))
    value, log = ot.emd2(a, b, M, numItermax=50_000_000, log=True)
    return float(value), log.get("warning") is None


def cells(U: np.ndarray, dom: Domain, bins: int = EVAL_BINS) -> tuple[np.ndarray, list[int]]:
    """Each encoded unit row's cell per column: a categorical column's code, a numeric column's bin of
    ``bins`` equal bins of the declared range; and the number of cells per column."""
    C = np.empty(U.shape, dtype=np.int64)
    sizes = [0] * dom.d
    for i in dom.numeric_index:
        C[:, i] = np.clip((U[:, i] * bins).astype(np.int64), 0, bins - 1)
        sizes[i] = bins
    for i, size in zip(dom.categorical_index, dom.category_sizes, strict=True):
        C[:, i] = U[:, i].astype(np.int64)
        sizes[i] = size
    return C, sizes


def marginal_errors(U: np.ndarray, V: np.ndarray, dom: Domain) -> dict:
    """Total-variation distance of 1-way and 2-way marginals, averaged over columns / pairs (see module)."""
    cu, sizes = cells(U, dom)
    cv, _ = cells(V, dom)

    def tv(a, b, size):
        return 0.5 * float(np.abs(np.bincount(a, minlength=size) / len(a) - np.bincount(b, minlength=size) / len(b)).sum())

    one = [tv(cu[:, j], cv[:, j], sizes[j]) for j in range(dom.d)]
    two = [tv(cu[:, i] * sizes[j] + cu[:, j], cv[:, i] * sizes[j] + cv[:, j], sizes[i] * sizes[j])
           for i, j in itertools.combinations(range(dom.d), 2)]
    cat = set(dom.categorical_index.tolist())
    return {"marg1": float(np.mean(one)), "marg2": float(np.mean(two)),
            "marg1_cat": float(np.mean([one[j] for j in range(dom.d) if j in cat])),
            "marg1_num": float(np.mean([one[j] for j in range(dom.d) if j not in cat]))}


def metrics(X: np.ndarray, Y: np.ndarray, dom: Domain) -> dict:
    U, V = dom.to_unit(X), dom.to_unit(Y)
    w1, exact = mixed_w1(U, V, column_weights(dom))
    return {"w1": w1, "exact": exact, **marginal_errors(U, V, dom), "m": int(len(Y))}


# --------------------------------------------------------------------------------------- cache
def key(**kw) -> str:
    return json.dumps(kw, sort_keys=True)


# ------------------------------------------------------------------------------------- phases
def run_peer_jobs(rows: dict, jobs: list[dict], phase: str, path: Path) -> None:
    """Run peer jobs (one table at a time, so an interruption loses little) and store their metrics."""
    for name in sorted({j["table"] for j in jobs}):
        part = [j for j in jobs if j["table"] == name]
        X, dom = table(name)
        data = {}
        for j in part:
            lo, hi, nb = peer_columns(dom, j["bins"])
            data[name] = (X, lo, hi)
            j["bins"] = nb
        t0 = time.time()
        with tempfile.TemporaryDirectory() as tmp:
            res = bench_peers.run_peers(part, Path(tmp) / "raw.jsonl", data=data)
        print(f"{name}: {len(part)} peer runs in {time.time() - t0:.0f}s wall", flush=True)
        for j in part:
            meta = json.loads(j["id"])
            r = res.get(j["id"], {"error": "no result"})
            method = j["synth"] + (f":{j['mbi_method']}" if j.get("mbi_method") else "")
            row = dict(key=j["id"], phase=phase, table=name, n=len(X), method=method, eps=j["epsilon"],
                       seed=j["seed"], bins=meta["bins"], delta=j["delta"], neighbours="add_remove (n released exactly)",
                       versions=r.get("versions"))
            if "error" in r:
                row["error"] = r["error"]
                print("ERROR", j["id"], r["error"], flush=True)
            else:
                Y = decode_peer(np.asarray(r["Y"], float), dom, meta["bins"], np.random.default_rng(j["seed"] + 7))
                row.update(cpu=r["cpu"], **metrics(X, Y, dom))
            put(rows, row, path)


def phase_tune(rows: dict, tables: list[str], path: Path, variant: str | None = None) -> dict:
    """Bins per table: MST's lowest mixed W1 at ε = 1 on the tuning seed (in the peers' favour); AIM takes
    them. Keys ``"<table>|mst"`` (private-pgm's default rounding) or ``"<table>|mst:sample"`` (the variant)."""
    label = "mst" if variant is None else f"mst:{variant}"
    extra = {} if variant is None else {"mbi_method": variant}
    jobs = []
    for name, b in itertools.product(tables, BIN_CANDIDATES):
        k = key(phase="tune", table=name, method=label, eps=1.0, seed=TUNE_SEED, bins=b)
        if k not in rows:
            jobs.append(dict(id=k, table=name, synth="mst", epsilon=1.0, delta=DELTA, seed=TUNE_SEED, bins=b, **extra))
    if jobs:
        run_peer_jobs(rows, jobs, "tune", path)
    choice = {}
    for name in tables:
        cands = [rows.get(key(phase="tune", table=name, method=label, eps=1.0, seed=TUNE_SEED, bins=b), {})
                 for b in BIN_CANDIDATES]
        cands = [c for c in cands if "w1" in c]
        if cands:
            choice[f"{name}|{label}"] = min(cands, key=lambda c: c["w1"])["bins"]
    return choice


def peer_bins(bins: dict, name: str, method: str) -> int | None:
    """The tuned bins of a peer on a table: AIM takes MST's of the same row-drawing method."""
    base, _, variant = method.partition(":")
    return bins.get(f"{name}|mst" + (f":{variant}" if variant else ""))


def phase_peers(rows: dict, tables: list[str], bins: dict, path: Path, quick: bool, variant: str | None = None) -> None:
    jobs = []
    for name, peer, eps in itertools.product(tables, PEERS, EPSILONS):
        label = peer if variant is None else f"{peer}:{variant}"
        for seed in (PEER_SEEDS if variant is None else VARIANT_SEEDS)[peer][: 1 if quick else None]:
            b = peer_bins(bins, name, label)
            k = key(phase="run", table=name, method=label, eps=eps, seed=seed, bins=b)
            if k not in rows:
                jobs.append(dict(id=k, table=name, synth=peer, epsilon=eps, delta=DELTA, seed=seed, bins=b,
                                 **({"mbi_method": variant} if variant else {})))
    if jobs:
        run_peer_jobs(rows, jobs, "run", path)


def ours_available() -> tuple[list[str], list[str]]:
    """(mechanisms of OURS that take categorical columns in this checkout, those that do not)."""
    from dpsynth_core.mechanisms import MECHANISMS, load_all

    load_all()
    have = [m for m in OURS if m in MECHANISMS and MECHANISMS[m].categorical]
    return have, [m for m in OURS if m not in have]


def phase_ours(rows: dict, tables: list[str], path: Path, quick: bool) -> list[str]:
    have, missing = ours_available()
    for m in missing:
        print(f"note: {m} does not take categorical columns in this checkout: skipped", flush=True)
    for name, method, eps in itertools.product(tables, have, EPSILONS):
        X, dom = table(name)
        for seed in SEEDS[: 1 if quick else None]:
            k = key(phase="run", table=name, method=method, eps=eps, seed=seed)
            if k in rows:
                continue
            kw = {"delta": DELTA} if method == "private_evolution" else {}
            t0 = time.process_time()
            rel = run(method, X, dom, epsilon=eps, rng=seed, **kw)
            cpu = time.process_time() - t0
            Y = dom.read(rel.synthetic, name="synthetic", owner="bench_mixed", min_rows=0)
            row = dict(key=k, phase="run", table=name, n=len(X), method=method, eps=eps, seed=seed, bins=None,
                       delta=float(rel.delta), neighbours=rel.neighbours, cpu=cpu)
            if len(Y) == 0:
                row["error"] = "empty release"
            else:
                row.update(**metrics(X, Y, dom))
            put(rows, row, path)
            print(f"{name} {method} ε={eps:g} seed {seed}: W1 {row.get('w1', float('nan')):.4f} cpu {cpu:.2f}s",
                  flush=True)
    return missing


#: The marginal tables (issue 34): the peers' convention (n public, δ = DELTA), the project's default (noisy n,
#: δ = DELTA) and auto (δ = DELTA given); labels "marginals (peers)", "marginals (default)", "auto".
MARGINALS_VARIANTS = {"marginals (peers)": lambda n: dict(delta=DELTA, n_public=n),
                      "marginals (default)": lambda n: dict(delta=DELTA), "auto": lambda n: dict(delta=DELTA)}
MARGINALS_RULE_VERSION = bench_peers.MARGINALS_RULE_VERSION


def phase_marginals(rows: dict, tables: list[str], path: Path, quick: bool) -> None:
    for name, label, eps in itertools.product(tables, MARGINALS_VARIANTS, EPSILONS):
        X, dom = table(name)
        for seed in bench_peers.MARGINALS_SEEDS[: 1 if quick else None]:
            k = key(phase="run", table=name, method=label, eps=eps, seed=seed, rule=MARGINALS_RULE_VERSION)
            if k in rows:
                continue
            t0 = time.process_time()
            rel = run("auto" if label == "auto" else "marginals", X, dom, epsilon=eps, rng=seed,
                      **MARGINALS_VARIANTS[label](len(X)))
            cpu = time.process_time() - t0
            Y = dom.read(rel.synthetic, name="synthetic", owner="bench_mixed", min_rows=0)
            row = dict(key=k, phase="run", table=name, n=len(X), method=label, eps=eps, seed=seed, bins=None,
                       delta=float(rel.delta), neighbours=rel.neighbours, cpu=cpu, rule=MARGINALS_RULE_VERSION,
                       **bench_peers.when(),
                       chosen=rel.mechanism, bound=rel.bound, **metrics(X, Y, dom))
            put(rows, row, path)
            print(f"{name} {label} ε={eps:g} seed {seed}: W1 {row['w1']:.4f} cpu {cpu:.2f}s", flush=True)


def marginals_verdict(summary_rows: list[dict]) -> list[dict]:
    """Per (table, ε) and marginals variant: W1 and the 1-/2-way errors over the best peer's (default and i.i.d.
    rows alike, in the peers' favour), each error against the peer best at it."""
    out = []
    for name, eps in sorted({(t["table"], t["eps"]) for t in summary_rows}):
        part = {t["method"]: t for t in summary_rows if t["table"] == name and t["eps"] == eps}
        peers = [t for m, t in part.items() if is_peer(m)]
        if not peers:
            continue
        for label in MARGINALS_VARIANTS:
            if label in part:
                m = part[label]
                best = {f: min(peers, key=lambda t, f=f: t[f]) for f in ("w1", "marg1", "marg2")}
                out.append(dict(table=name, eps=eps, variant=label, w1=m["w1"], w1_se=m["w1_se"],
                                **{f"{f}_ratio": m[f] / best[f][f] for f in ("w1", "marg1", "marg2")},
                                best_peer_w1=best["w1"]["method"], cpu=m["cpu"]))
    return out


# ----------------------------------------------------------------------------------- summarise
def summarise(rows: dict, bins: dict) -> dict:
    runs = [r for r in rows.values() if r.get("phase") == "run" and "w1" in r
            and (not is_peer(r["method"]) or r["bins"] == peer_bins(bins, r["table"], r["method"]))
            and (r["method"] not in MARGINALS_VARIANTS or r.get("rule") == MARGINALS_RULE_VERSION)]
    groups: dict = {}
    for r in runs:
        groups.setdefault((r["table"], r["eps"], r["method"]), []).append(r)
    out = []
    for (name, eps, method), rs in sorted(groups.items()):
        def mse(field, rs=rs):
            a = np.array([r[field] for r in rs], float)
            se = float(np.std(a, ddof=1) / math.sqrt(len(a))) if len(a) > 1 else float("nan")
            return float(np.mean(a)), se
        entry = dict(table=name, n=rs[0]["n"], eps=eps, method=method, seeds=len(rs), delta=rs[0]["delta"],
                     neighbours=rs[0]["neighbours"], bins=rs[0]["bins"], exact=all(r["exact"] for r in rs),
                     cpu=float(np.mean([r["cpu"] for r in rs])), m=float(np.mean([r["m"] for r in rs])))
        for f in ("w1", "marg1", "marg2", "marg1_cat", "marg1_num"):
            entry[f], entry[f + "_se"] = mse(f)
        out.append(entry)
    verdict = []
    for name, eps in sorted({(t["table"], t["eps"]) for t in out}):
        part = {t["method"]: t for t in out if t["table"] == name and t["eps"] == eps}
        peers = {m: t for m, t in part.items() if is_peer(m)}  # default and i.i.d.-sampling variants alike
        ours = {m: t for m, t in part.items() if not is_peer(m)}
        if not peers or not ours:
            continue
        v = dict(table=name, eps=eps)
        for metric in ("w1", "marg1", "marg2"):
            bp = min(peers, key=lambda m, f=metric: peers[m][f])
            bo = min(ours, key=lambda m, f=metric: ours[m][f])
            v[metric] = dict(best_peer=bp, peer=peers[bp][metric], best_ours=bo, ours=ours[bo][metric],
                             ratio=ours[bo][metric] / peers[bp][metric])
        bp = min(peers, key=lambda m: peers[m]["w1"])
        bo = min(ours, key=lambda m: ours[m]["w1"])
        v["cpu_ratio"] = ours[bo]["cpu"] / peers[bp]["cpu"]
        verdict.append(v)
    errors = [dict(key=r["key"], error=r["error"]) for r in rows.values() if "error" in r]
    return {"table": out, "verdict": verdict, "bins": bins, "errors": errors, "marginals": marginals_verdict(out),
            "marginals_rows": bench_peers.marginals_rows_note([r for r in runs if r["method"] in MARGINALS_VARIANTS]),
            "auto_choice": {f"{r['table']}|{r['eps']:g}": r["chosen"] for r in runs if r["method"] == "auto"}}


def versions(rows: dict) -> dict:
    import ot

    import dpsynth_core

    peer = next((r.get("versions") for r in rows.values() if r.get("versions")), None) or {}
    got = subprocess.run([str(bench_peers.PY), "-c", "import importlib.metadata as m; print(m.version('palmerpenguins'))"],
                         capture_output=True, text=True)
    return {"peers": peer, "palmerpenguins": got.stdout.strip() or None, "POT": ot.__version__,
            "dpsynth": getattr(dpsynth_core, "__version__", None)}


METHOD_ORDER = ("aim", "mst", "aim:sample", "mst:sample", "pmm", "psmm", "flat_histogram", "sparse_marginals",
                "private_evolution", "marginals (default)")


def is_peer(method: str) -> bool:
    return method.split(":")[0] in PEERS


def plot(summary: dict, path: Path) -> str | None:
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    tables = [t for t in TABLES if any(r["table"] == t for r in summary["table"])]
    fig, axes = plt.subplots(1, len(tables), figsize=(4.6 * len(tables), 4.4), squeeze=False)
    handles = {}
    for ax, name in zip(axes[0], tables, strict=True):
        for j, m in enumerate(METHOD_ORDER):
            pts = sorted((t["eps"], t["w1"], t["w1_se"]) for t in summary["table"] if t["table"] == name and t["method"] == m)
            if pts:
                e, w, s = zip(*pts, strict=True)
                peer = is_peer(m)
                handles[m] = ax.errorbar(e, w, yerr=s, marker="osos"[j] if peer else "x^vD<*"[j - 4],
                                         ls=("--" if j < 2 else ":") if peer else "-", color=f"C{j}", ms=5,
                                         mfc="none" if j in (2, 3) else None, lw=1.3 if peer else 1, capsize=2)
        n = next(t["n"] for t in summary["table"] if t["table"] == name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(list(EPSILONS), [f"{e:g}" for e in EPSILONS])
        ax.minorticks_off()
        lo, hi = ax.get_ylim()
        ticks = [t for t in (0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0) if lo <= t <= hi]
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
        ax.set_title(f"{name} (n = {n})", fontsize=10)
        ax.set_xlabel("ε")
    axes[0][0].set_ylabel("W1, mixed metric (mean over seeds ± s.e.)")
    labels = [m for m in METHOD_ORDER if m in handles]
    fig.legend([handles[m] for m in labels], [peer_label(m) for m in labels], loc="lower center",
               ncol=min(len(labels), 5), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def peer_label(method: str) -> str:
    """"aim" -> "AIM", "mst:sample" -> "MST (i.i.d. rows)", ours unchanged."""
    if not is_peer(method):
        return method
    base, _, variant = method.partition(":")
    return base.upper() + (" (i.i.d. rows)" if variant == "sample" else "")


def markdown(summary: dict) -> str:
    """Every method per (table, ε): W1, 1-/2-way marginal errors, CPU seconds, seeds (for docs/mixed-data.md)."""
    out = ["| table | ε | method | seeds | W1 (mixed) | 1-way TV | 2-way TV | CPU s |", "|---|---|---|---|---|---|---|---|"]
    for name in TABLES:
        for eps in EPSILONS:
            part = sorted((t for t in summary["table"] if t["table"] == name and t["eps"] == eps), key=lambda t: t["w1"])
            for t in part:
                label = peer_label(t["method"])
                if is_peer(t["method"]):
                    label += f" ({t['bins']} bins)"
                out.append(f"| {name} | {eps:g} | {label} | {t['seeds']} | {t['w1']:.4f} ± {t['w1_se']:.4f} | "
                           f"{t['marg1']:.3f} | {t['marg2']:.3f} | {t['cpu']:.2f} |")
    return "\n".join(out)


def markdown_verdict(summary: dict) -> str:
    """Per (table, ε): the best of ours by W1 against the best AIM/MST as users run them and with i.i.d.
    rows: W1 (mean ± s.e.), 1-way / 2-way TV, CPU; the last column is ours / the best peer of both."""
    out = ["| table | ε | best of ours: W1 | 1-way | 2-way | CPU s | best peer, default rows: W1 | 1-way | 2-way "
           "| best peer, i.i.d. rows: W1 | 1-way | 2-way | CPU s | W1 ours / best peer |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in TABLES:
        for eps in EPSILONS:
            part = [t for t in summary["table"] if t["table"] == name and t["eps"] == eps]
            ours = [t for t in part if not is_peer(t["method"])]
            default = [t for t in part if is_peer(t["method"]) and ":" not in t["method"]]
            iid = [t for t in part if is_peer(t["method"]) and ":" in t["method"]]
            if not (ours and default):
                continue
            o = min(ours, key=lambda t: t["w1"])
            p = min(default, key=lambda t: t["w1"])
            q = min(iid, key=lambda t: t["w1"]) if iid else None
            best = min([p] + ([q] if q else []), key=lambda t: t["w1"])

            def cell(t):
                return (f"{t['w1']:.3f} ± {t['w1_se']:.3f} ({peer_label(t['method']).split(' (')[0]}, {t['seeds']} seeds) "
                        f"| {t['marg1']:.3f} | {t['marg2']:.3f}")
            qcell = f"{cell(q)} | {q['cpu']:.1f}" if q else "– | – | – | –"
            out.append(f"| {name} | {eps:g} | {cell(o)} | {o['cpu']:.2f} | {cell(p)} | {qcell} | {o['w1'] / best['w1']:.2f} |")
    return "\n".join(out)


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    phases = [a for a in argv if not a.startswith("--")] or ["tune", "peers", "ours", "variant", "summarise"]
    path = RESULTS / ("mixed_quick.jsonl" if quick else "mixed.jsonl")
    tables = list(TABLES)
    rows = load_cache(path)
    bins = phase_tune(rows, tables, path)
    if "variant" in phases or "summarise" in phases:
        bins.update(phase_tune(rows, tables, path, variant=VARIANT))
    print("bins in the peers' favour:", bins, flush=True)
    skipped: list[str] = []
    if "peers" in phases:
        phase_peers(rows, tables, bins, path, quick)
    if "ours" in phases:
        skipped = phase_ours(rows, tables, path, quick)
    else:
        skipped = ours_available()[1]
    if "variant" in phases:
        phase_peers(rows, tables, bins, path, quick, variant=VARIANT)
    if "marginals" in phases:
        phase_marginals(rows, tables, path, quick)
    if "summarise" in phases:
        summary = summarise(rows, bins)
        payload = {"machine": machine(), "description": __doc__, "delta_peers": DELTA,
                   "delta_private_evolution": DELTA, "epsilons": list(EPSILONS), "seeds_ours": list(SEEDS),
                   "seeds_peers": {k: list(v) for k, v in PEER_SEEDS.items()},
                   "seeds_peers_iid_rows": {k: list(v) for k, v in VARIANT_SEEDS.items()}, "bin_candidates": list(BIN_CANDIDATES),
                   "eval_bins": EVAL_BINS, "skipped": skipped, "versions": versions(rows),
                   "tables": {name: {"n": int(len(table(name)[0])), "domain": table(name)[1].to_dict()} for name in tables},
                   **summary}
        out = RESULTS / ("mixed_quick.json" if quick else "mixed.json")
        out.write_text(json.dumps(payload, indent=1, default=float))
        img = plot(summary, IMG / ("mixed_w1_quick.png" if quick else "mixed_w1.png"))
        print("wrote", out, "plot:", img)
        print(markdown(summary))
        print(markdown_verdict(summary))
        for v in summary["verdict"]:
            print(json.dumps(v))


if __name__ == "__main__":
    main(sys.argv[1:])

"""The marginal tables on wide and on very long tables (issue 34): the tree model, private-pgm's ``mbi`` on the
same noisy tables, and 10^7-10^8 rows through Dask.

Phases
    wide    one release at the defaults (pure ε, and δ = 1e-5) of a generated 20-column mixed table of
            50,000 rows (10 numeric, 4 whole-number with a spike at 0, 6 categorical with 3-4 categories;
            :func:`wide_table`), ε = 1, three repeats; PMM at its defaults on the same data in the same run
            (the ratio is what to compare across machines). Wall and CPU seconds, the load average before
            and after, the 1-/2-way marginal errors (``bench_mixed.marginal_errors``: total variation over
            every column and all 190 pairs, numeric columns in 10 bins), and the checks that whole-number
            columns are whole and categories the declared ones.
    switch  16 and 20 numeric columns (2^16 and 2^20 cells at 2 coarse bins: the dense grid still fits), n = 50,000,
            δ = 1e-5, ε = 1: the dense fit against the tree, time and the 1-/2-way errors.
    pgm     the same noisy tables (one release, δ = 1e-5, ε = 1; and pure ε) fitted twice on the release's tree:
            by the tree model (``marginals.tree.fit_tree``: margins, raking, no iterations) and by private-pgm's
            ``mbi.estimation.mirror_descent`` (the library MST and AIM use, on the tree's cliques, 1-way and
            tree-pair measurements with their noise s.d.) at 100 and 1000 iterations. The model-level errors:
            total variation between the model's coarse tables and the true ones (owner view, never exported
            by the library), averaged over the 20 columns, the 19 tree pairs and all 190 pairs; and the fit
            time. ``mbi`` (and jax) run in the peers' environment (``benchmarks/peers/.venv-peers``, pinned
            ``mbi==1.1.0``; ``bench_peers.ensure_venv`` creates it) through
            ``benchmarks/bench_marginals_pgm.py``.
    dask    d = 6 numeric, rows generated lazily chunk by chunk (``dask.array.random``; never materialised),
            10^7 and 10^8 rows in chunks of 10^6, ε = 1, n public (``limits.max_size`` raised to n for
            10^8: a plan's n is capped at 10^7 by default); one release each in a fresh process (its
            peak resident memory, ``ru_maxrss``, is the run's), wall time and the load average. The counts of
            the chunks add up (``Rows.sum``), so the client holds tables, never rows.

Results: ``benchmarks/results/marginals_wide.json``. Usage::

    nice -n 10 .venv/bin/python benchmarks/bench_marginals_wide.py [wide] [switch] [pgm] [dask]
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import bench_mixed  # noqa: E402
from benchmarks.common import RESULTS, run_phases  # noqa: E402
from dpsynth_core import Domain, run  # noqa: E402

OUT = RESULTS / "marginals_wide.json"
PEERS_PY = ROOT / "benchmarks" / "peers" / ".venv-peers" / "bin" / "python"


def wide_table(n: int, seed: int = 0) -> tuple[pd.DataFrame, Domain]:
    """A 20-column mixed table driven by four latent factors: 10 numeric columns in [0, 100], 4 whole-number
    columns in 0..20 (40 % zeros on top of a skewed count), 6 categorical columns (3 or 4 declared categories)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 4))
    cols, names, lo, hi, cats, ints = {}, [], [], [], {}, []
    for j in range(10):
        cols[f"x{j}"] = np.clip(50 + 15 * (z[:, j % 4] + 0.5 * rng.normal(size=n)), 0, 100)
        names.append(f"x{j}"), lo.append(0.0), hi.append(100.0)
    for j in range(4):
        k = np.clip(np.rint(np.exp(0.6 * z[:, j]) * (j + 1) - 1), 0, 20)
        k[rng.random(n) < 0.4] = 0
        cols[f"k{j}"] = k
        names.append(f"k{j}"), lo.append(0.0), hi.append(20.0), ints.append(f"k{j}")
    for j in range(6):
        labels = [f"c{j}_{t}" for t in range(3 + j % 2)]
        code = np.digitize(z[:, j % 4] + rng.normal(size=n), [-1.0, 0.0, 1.0][: len(labels) - 1])
        cols[f"c{j}"] = np.array(labels)[code]
        names.append(f"c{j}")
        cats[f"c{j}"] = labels
    dom = Domain(lo, hi, names=tuple(names), categories=cats, integers=tuple(ints))
    return pd.DataFrame(cols)[names], dom


def _timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def _checks(df: pd.DataFrame, dom: Domain, syn: pd.DataFrame) -> dict:
    ints = all(np.all(np.asarray(syn[c], dtype=float) == np.rint(np.asarray(syn[c], dtype=float))) for c in dom.integers)
    cats = all(set(syn[c].unique()) <= set(dom.categories[c]) for c in dom.categories)
    return {"integers_whole": bool(ints), "categories_declared": bool(cats), "rows": int(len(syn))}


def phase_wide(repeats: int = 3, n: int = 50_000) -> list[dict]:
    df, dom = wide_table(n)
    U = dom.to_unit(dom.read(df))
    out = []
    for label, name, kw in (("marginals (pure ε)", "marginals", {}), ("marginals (δ = 1e-5)", "marginals",
                                                                     {"delta": 1e-5}), ("pmm", "pmm", {})):
        load0 = os.getloadavg()[0]
        runs = [_timed(lambda r=r, name=name, kw=kw: run(name, df, dom, epsilon=1.0, rng=r, **kw)) for r in range(repeats)]
        rel = runs[0][2]
        syn = rel.synthetic if isinstance(rel.synthetic, pd.DataFrame) else pd.DataFrame(rel.synthetic, columns=dom.names)
        err = bench_mixed.marginal_errors(U, dom.to_unit(dom.read(syn)), dom)
        row = {"release": label, "d": dom.d, "n": n, "wall": float(np.median([r[0] for r in runs])),
               "cpu": float(np.median([r[1] for r in runs])), "walls": [r[0] for r in runs],
               "load_before": load0, "load_after": os.getloadavg()[0], **err, **_checks(df, dom, syn),
               "model": rel.params.get("model"), "coarse": rel.params.get("coarse"), "fine": rel.params.get("fine"),
               "bound": rel.bound, "ledger_epsilon": rel.ledger.epsilon, "epsilon": rel.epsilon}
        out.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "model"}), flush=True)
    pmm = out[-1]
    for row in out[:-1]:
        row["wall_ratio_to_pmm"] = row["wall"] / pmm["wall"]
    return out


def phase_switch(n: int = 50_000) -> list[dict]:
    """Where the dense grid still fits but only at 2 coarse bins (16 and 20 numeric columns: 2^16 and 2^20 cells):
    the dense fit against the tree on the same data, δ = 1e-5, ε = 1, one seed."""
    out = []
    for d in (16, 20):
        rng = np.random.default_rng(0)
        z = rng.normal(size=(n, 4))
        X = np.clip(0.5 + 0.15 * (z[:, np.arange(d) % 4] + 0.5 * rng.normal(size=(n, d))), 0, 1)
        dom = Domain.unit(d)
        for model in ("dense", "tree"):
            load0 = os.getloadavg()[0]
            wall, cpu, rel = _timed(lambda X=X, dom=dom, model=model: run("marginals", X, dom, epsilon=1.0, delta=1e-5,
                                                                          rng=0, model=model))
            row = {"d": d, "n": n, "model": model, "coarse": rel.params["coarse"], "wall": wall, "cpu": cpu,
                   "load_before": load0, "bound": rel.bound, **bench_mixed.marginal_errors(X, rel.synthetic, dom)}
            out.append(row)
            print(json.dumps(row), flush=True)
    return out


def _tv(a: np.ndarray, b: np.ndarray) -> float:
    return 0.5 * float(np.abs(a / a.sum() - b / b.sum()).sum())


def _model_errors(margins: dict, true_one: list, true_two: dict, edges: list) -> dict:
    """Mean total variation of the model's coarse tables against the true ones."""
    one = [_tv(margins[(j,)], t) for j, t in enumerate(true_one)]
    two = {pr: _tv(margins[pr], t) for pr, t in true_two.items()}
    return {"tv1": float(np.mean(one)), "tv2_tree": float(np.mean([two[tuple(e)] for e in edges])),
            "tv2_all": float(np.mean(list(two.values())))}


def _release_tables(delta: float | None, n: int):
    """One release of the wide table and what both fits need: measurements, the tree, the true coarse tables."""
    from dpsynth_core.mechanisms.marginals.mechanism import _measurements

    df, dom = wide_table(n)
    rel = run("marginals", df, dom, epsilon=1.0, delta=delta, rng=0)
    tr, owner = rel.trace, rel.owner
    lay = tr.layout
    meas = _measurements(lay, tr.noise, tr.noisy_one, tr.noisy_two)
    true_one = [np.bincount(c.to_coarse, weights=t, minlength=c.coarse) for c, t in zip(lay.columns, owner.true_one,
                                                                                         strict=True)]
    true_two = {pr: t.reshape(lay.columns[pr[0]].coarse, lay.columns[pr[1]].coarse).astype(float)
                for pr, t in zip(lay.pairs, owner.true_two, strict=True)}
    return rel, lay, meas, true_one, true_two


def phase_pgm(n: int = 50_000) -> list[dict]:
    from dpsynth_core.mechanisms.marginals.tree import fit_tree

    out = []
    for delta in (1e-5, None):
        rel, lay, meas, true_one, true_two = _release_tables(delta, n)
        total = rel.params["n_hat"]
        wall, cpu, model = _timed(lambda lay=lay, meas=meas, total=total: fit_tree(lay.coarse_shape, meas, total))
        margins = {(j,): model.marginal((j,)) for j in range(lay.d)}
        margins.update({pr: model.marginal(pr) for pr in lay.pairs})
        edges = [tuple(e) for e in model.edges]
        row = {"fit": "tree (ours)", "noise": rel.params["noise"], "wall": wall, "cpu": cpu,
               "load": os.getloadavg()[0], **_model_errors(margins, true_one, true_two, edges)}
        out.append(row)
        print(json.dumps(row), flush=True)
        keep = [m for m in meas if len(m.axes) == 1 or m.axes in edges]
        for iters in (100, 1000):
            res = _run_mbi(lay.coarse_shape, keep, edges, lay.pairs, total, iters)
            margins = {(j,): np.asarray(res["one"][j]) for j in range(lay.d)}
            margins.update({tuple(pr): np.asarray(t) for pr, t in zip(lay.pairs, res["two"], strict=True)})
            row = {"fit": f"mbi mirror_descent, {iters} iterations", "noise": rel.params["noise"], "wall": res["wall"],
                   "cpu": res["cpu"], "compile_included": True, "load": os.getloadavg()[0], "mbi": res["version"],
                   **_model_errors(margins, true_one, true_two, edges)}
            out.append(row)
            print(json.dumps(row), flush=True)
    return out


def _run_mbi(shape, meas, edges, pairs, total, iters) -> dict:
    if not PEERS_PY.exists():
        from benchmarks.bench_peers import ensure_venv

        ensure_venv()
    with tempfile.TemporaryDirectory() as tmp:
        arrays = {"shape": np.asarray(shape), "total": np.asarray(total), "iters": np.asarray(iters),
                  "edges": np.asarray(edges), "pairs": np.asarray(pairs)}
        for k, m in enumerate(meas):
            arrays[f"axes{k}"] = np.asarray(m.axes)
            arrays[f"values{k}"] = m.values
            arrays[f"sd{k}"] = np.sqrt(m.variance)
        np.savez(Path(tmp) / "in.npz", count=len(meas), **arrays)
        subprocess.run([str(PEERS_PY), str(ROOT / "benchmarks" / "bench_marginals_pgm.py"), tmp], check=True)
        return json.loads((Path(tmp) / "out.json").read_text())


_DASK_CHILD = """
import json, resource, sys, time
import dask, dask.array as da
from dpsynth_core import Domain, limits, run
n, d, chunk = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
dask.config.set(scheduler="threads")
X = da.random.RandomState(0).random_sample((n, d), chunks=(chunk, d))
X = X * X  # skewed, still in [0, 1]: lazy, one chunk at a time
t0, c0 = time.perf_counter(), time.process_time()
with limits.override(max_size=max(n, limits.current().max_size)):  # n_public above the default 10^7 plan
    rel = run("marginals", X, Domain.unit(d), epsilon=1.0, n_public=n, n_synthetic=100_000, rng=0)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"n": n, "d": d, "chunk": chunk, "wall": wall, "cpu": cpu, "rows_out": len(rel.synthetic),
                  "bound": rel.bound, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def phase_dask(sizes=(10**7, 10**8), d: int = 6, chunk: int = 1_000_000) -> list[dict]:
    out = []
    for n in sizes:
        load0 = os.getloadavg()[0]
        res = subprocess.run([sys.executable, "-c", _DASK_CHILD, str(n), str(d), str(chunk)], capture_output=True,
                             text=True, cwd=ROOT, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        if res.returncode:
            raise RuntimeError(res.stderr[-2000:])
        row = {**json.loads(res.stdout.strip().splitlines()[-1]), "load_before": load0, "load_after": os.getloadavg()[0],
               "children_peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def main(argv: list[str]) -> None:
    run_phases(OUT, __doc__, {"wide": phase_wide, "switch": phase_switch, "pgm": phase_pgm, "dask": phase_dask}, argv)


if __name__ == "__main__":
    main(sys.argv[1:])

"""The dashboard's non-Streamlit helper layer (no ``import streamlit`` here).

The Streamlit pages stay thin: they build widgets, call ONE function of this module through a
cache, and hand the result to :mod:`dpsynth_core.viz`. Everything that can be tested without a
browser lives here: the default dataset, reading an uploaded CSV, building a public domain from
bounds the user typed, resolving a mechanism's keyword arguments from its registry schema, W1 with
its certified interval, the JSON report (``Release.public()`` only), the shareable URL state and the
sweeps of the Rates and Compare pages.

Nothing here derives bounds, scales or grids from the private data (DESIGN.md, privacy model).
"""

from __future__ import annotations

import io
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .domain import Domain
from .mechanisms import MECHANISMS, load_all
from .mechanisms.base import Release, to_jsonable
from .validation import check_float, check_int, param_error

__all__ = [
    "EPSILON_GRID",
    "DELTA_GRID",
    "MAX_UPLOAD_ROWS",
    "MAX_UPLOAD_COLUMNS",
    "Data",
    "default_data",
    "generate",
    "real_dataset",
    "generator_schemas",
    "real_dataset_names",
    "read_upload",
    "build_domain",
    "snap_epsilon",
    "parse_query",
    "mechanism_kwargs",
    "run_mechanism",
    "w1",
    "report_json",
    "synthetic_csv",
    "sweep",
    "compare",
]

#: ε values of the log slider: 1-2-5 steps from 10^-3 to 10^2.
EPSILON_GRID: tuple[float, ...] = tuple(
    float(f"{m}e{e}") for e in range(-3, 3) for m in (1, 2, 5) if float(f"{m}e{e}") <= 100.0
)
#: δ values offered for approximate-DP mechanisms.
DELTA_GRID: tuple[float, ...] = tuple(10.0**-k for k in range(12, 1, -1))
#: Upload caps: a browser demo, not a data warehouse (issue 9, upload safety).
MAX_UPLOAD_ROWS = 200_000
MAX_UPLOAD_COLUMNS = 64


# ----------------------------------------------------------------------------------- datasets
@dataclass
class Data:
    """A dataset as the dashboard holds it: points, the PUBLIC domain, a name and a description.

    ``labels`` (optional, length n) are only used for colouring previews and the digits pictures.
    ``spec`` records how to rebuild it (``{"kind": "generator"|"real"|"upload", "name": ..., ...}``).
    """

    X: np.ndarray
    domain: Domain
    name: str
    description: str = ""
    labels: np.ndarray | None = None
    spec: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])


def _from_dataset(ds: Any, spec: dict) -> Data:
    X = np.asarray(ds.X, dtype=float)
    labels = getattr(ds, "labels", None)
    return Data(X=X, domain=ds.domain, name=str(getattr(ds, "name", spec.get("name", "data"))),
                description=str(getattr(ds, "description", "")),
                labels=None if labels is None else np.asarray(labels), spec=spec)


def _datasets_module():
    try:
        from . import datasets  # noqa: PLC0415 - lands in parallel with the dashboard
    except ImportError:
        return None
    return datasets


def _fallback_default() -> Data:
    """The embedded default dataset while ``datasets.py`` is not there: a 2-D mixture of two
    Gaussian clusters (n = 5000, seed 0) on the public domain [0, 1]^2 (clamped into it)."""
    rng = np.random.default_rng(0)
    n = 5000
    which = rng.random(n) < 0.5
    centres = np.where(which[:, None], [[0.3, 0.35]], [[0.7, 0.65]])
    X = np.clip(centres + rng.normal(scale=0.08, size=(n, 2)), 0.0, 1.0)
    return Data(X=X, domain=Domain([0.0, 0.0], [1.0, 1.0], names=("x0", "x1")), name="two_clusters",
                description="Two Gaussian clusters in the unit square (n = 5000, seed 0).",
                labels=which.astype(int), spec={"kind": "default", "name": "two_clusters"})


def default_data() -> Data:
    """``datasets.default_dataset()`` (2-D two-cluster mixture, n = 5000, seed 0), or the same
    thing generated inline until that module lands."""
    mod = _datasets_module()
    if mod is not None and hasattr(mod, "default_dataset"):
        ds = mod.default_dataset()
        return _from_dataset(ds, {"kind": "default", "name": str(getattr(ds, "name", "default"))})
    return _fallback_default()


def generator_schemas() -> dict[str, list[dict]]:
    """``{generator name: parameter schema}`` from ``datasets.GENERATORS`` ({} until it lands)."""
    mod = _datasets_module()
    gens = getattr(mod, "GENERATORS", None) if mod is not None else None
    if not gens:
        return {}
    return {name: list(entry[1]) for name, entry in gens.items()}


def real_dataset_names() -> list[str]:
    mod = _datasets_module()
    real = getattr(mod, "REAL_DATASETS", None) if mod is not None else None
    return list(real) if real else []


def generate(name: str, params: Mapping[str, Any]) -> Data:
    """Run generator ``name`` of ``datasets.GENERATORS`` with ``params`` (validated by it)."""
    mod = _datasets_module()
    gens = getattr(mod, "GENERATORS", {}) if mod is not None else {}
    if name not in gens:
        raise param_error("generate", "name", "one of " + ", ".join(repr(k) for k in gens), name)
    func = gens[name][0]
    ds = func(**dict(params))
    return _from_dataset(ds, {"kind": "generator", "name": name, "params": dict(params)})


def real_dataset(name: str) -> Data:
    """A bundled real dataset (``datasets.REAL_DATASETS[name]``: a loader or a Dataset)."""
    mod = _datasets_module()
    real = getattr(mod, "REAL_DATASETS", {}) if mod is not None else {}
    if name not in real:
        raise param_error("real_dataset", "name", "one of " + ", ".join(repr(k) for k in real), name)
    entry = real[name]
    if isinstance(entry, tuple):
        entry = entry[0]
    ds = entry() if callable(entry) else entry
    return _from_dataset(ds, {"kind": "real", "name": name})


def data_from_spec(spec: Mapping[str, Any]) -> Data:
    """Rebuild a dataset from a shareable spec (query parameter ``dataset``)."""
    kind = spec.get("kind")
    name = spec.get("name")
    if kind == "real":
        return real_dataset(name)
    if kind == "generator":
        return generate(name, spec.get("params", {}))
    return default_data()


def dataset_by_name(name: str) -> Data:
    """The dataset a URL names: a real dataset, a generator with its defaults, or the default."""
    if name in real_dataset_names():
        return real_dataset(name)
    schemas = generator_schemas()
    if name in schemas:
        return generate(name, {p["name"]: p.get("default") for p in schemas[name]})
    default = default_data()
    if name == default.name:
        return default
    raise ValueError(f"Unknown dataset {name!r}: use a generator name ({', '.join(schemas) or 'none yet'}), "
                     f"a bundled real dataset ({', '.join(real_dataset_names()) or 'none yet'}) or "
                     f"{default.name!r}.")


# ------------------------------------------------------------------------------------- uploads
def read_upload(data: bytes | str, filename: str = "upload.csv"):
    """Parse an uploaded CSV into a DataFrame of candidate numeric columns, or raise ValueError.

    Uses ``datasets.load_csv`` when available (it owns the CSV rules); enforces the dashboard's
    caps (:data:`MAX_UPLOAD_ROWS` rows, :data:`MAX_UPLOAD_COLUMNS` columns) with a clear message.
    Uploaded bytes stay in memory: nothing is written to disk or logged.
    """
    import pandas as pd

    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"The uploaded file {filename!r} must be bytes. Got {type(data).__name__}.")
    if len(data) == 0:
        raise ValueError(f"The uploaded file {filename!r} is empty.")
    mod = _datasets_module()
    if mod is not None and hasattr(mod, "load_csv"):
        df = mod.load_csv(io.BytesIO(bytes(data)))
    else:
        try:
            df = pd.read_csv(io.BytesIO(bytes(data)))
        except UnicodeDecodeError:
            raise ValueError(f"The uploaded file {filename!r} is not a UTF-8 text CSV file.") from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise ValueError(f"The uploaded file {filename!r} could not be read as CSV: {exc}") from None
        df = df.select_dtypes(include="number")
        if df.shape[1] == 0:
            raise ValueError(f"The uploaded file {filename!r} has no numeric column.")
        if df.shape[0] == 0:
            raise ValueError(f"The uploaded file {filename!r} has no data rows.")
        bad = [c for c in df.columns if not np.isfinite(df[c].to_numpy(dtype=float)).all()]
        if bad:
            raise ValueError(f"The uploaded file {filename!r} has missing or non-finite values in "
                             f"column(s) {bad[:5]}; clean them first.")
    if not isinstance(df, pd.DataFrame):
        df = pd.DataFrame(df)
    if df.shape[0] > MAX_UPLOAD_ROWS:
        raise ValueError(f"The uploaded file {filename!r} has {df.shape[0]} rows; the dashboard accepts at "
                         f"most {MAX_UPLOAD_ROWS}. Use the command line (`dpsynth synth`) for larger files.")
    if df.shape[1] > MAX_UPLOAD_COLUMNS:
        raise ValueError(f"The uploaded file {filename!r} has {df.shape[1]} columns; the dashboard accepts at "
                         f"most {MAX_UPLOAD_COLUMNS}.")
    return df


def build_domain(columns: Sequence[str], lower: Sequence[Any], upper: Sequence[Any]) -> Domain:
    """A public :class:`Domain` from bounds the user TYPED (never from the data)."""
    if len(columns) == 0:
        raise ValueError("Choose at least one column.")
    lo = [check_float(v, f"lower bound of {c!r}", "the Data page") for c, v in zip(columns, lower, strict=True)]
    hi = [check_float(v, f"upper bound of {c!r}", "the Data page") for c, v in zip(columns, upper, strict=True)]
    return Domain(lo, hi, names=tuple(str(c) for c in columns))


def upload_data(df, columns: Sequence[str], lower: Sequence[Any], upper: Sequence[Any],
                filename: str = "upload.csv") -> tuple[Data, int]:
    """Select ``columns`` of an uploaded frame and attach the typed public bounds.

    Returns the dataset and the number of rows outside the bounds (they will be clamped by every
    mechanism; an owner-side count, not private).
    """
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"Columns {missing} are not in the uploaded file.")
    dom = build_domain(columns, lower, upper)
    sub = df.loc[:, list(columns)]
    non_numeric = [c for c in sub.columns if not np.issubdtype(sub[c].dtype, np.number)]
    if non_numeric:
        raise ValueError(f"Columns {non_numeric} are not numeric; choose numeric columns.")
    X = sub.to_numpy(dtype=float)
    if not np.isfinite(X).all():
        raise ValueError("The chosen columns contain missing or non-finite values; clean them first.")
    outside = int((~dom.contains(X)).sum())
    data = Data(X=X, domain=dom, name=filename.rsplit(".", 1)[0] or "upload",
                description=f"Uploaded file {filename!r}: {X.shape[0]} rows, columns {list(columns)}.",
                spec={"kind": "upload", "name": filename})
    return data, outside


# ------------------------------------------------------------------------------- shared state
def snap_epsilon(value: Any, default: float = 1.0) -> float:
    """The value of :data:`EPSILON_GRID` nearest to ``value`` in log scale (``default`` if invalid)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return default
    if not math.isfinite(x) or x <= 0:
        return default
    grid = np.asarray(EPSILON_GRID)
    return float(grid[np.argmin(np.abs(np.log(grid) - math.log(x)))])


def parse_query(qp: Mapping[str, Any]) -> dict:
    """Read the shareable state (``eps``, ``seed``, ``delta``, ``rel``, ``dataset``) from URL query
    parameters; invalid values are dropped (reported in ``"ignored"``), never raised."""
    out: dict[str, Any] = {"ignored": []}

    def first(v):
        return v[0] if isinstance(v, (list, tuple)) and v else v

    if "eps" in qp:
        v = first(qp["eps"])
        try:
            x = float(v)
            if not (math.isfinite(x) and x > 0):
                raise ValueError
            out["epsilon"] = snap_epsilon(x)
        except (TypeError, ValueError):
            out["ignored"].append(f"eps={v!r}")
    if "delta" in qp:
        v = first(qp["delta"])
        try:
            x = float(v)
            if not (0 < x < 1):
                raise ValueError
            grid = np.asarray(DELTA_GRID)
            out["delta"] = float(grid[np.argmin(np.abs(np.log(grid) - math.log(x)))])
        except (TypeError, ValueError):
            out["ignored"].append(f"delta={v!r}")
    if "seed" in qp:
        v = first(qp["seed"])
        try:
            s = int(str(v))
            if s < 0 or s > 2**32 - 1:
                raise ValueError
            out["seed"] = s
        except (TypeError, ValueError):
            out["ignored"].append(f"seed={v!r}")
    if "rel" in qp:
        v = first(qp["rel"])
        if v in ("add_remove", "replace"):
            out["neighbours"] = v
        else:
            out["ignored"].append(f"rel={v!r}")
    if "dataset" in qp:
        out["dataset"] = str(first(qp["dataset"]))
    if "page" in qp:
        out["page"] = str(first(qp["page"]))
    return out


# ------------------------------------------------------------------------------- mechanisms
def mechanisms() -> dict:
    load_all()
    return MECHANISMS


def mechanism_kwargs(name: str, params: Mapping[str, Any], *, epsilon: float, delta: float, neighbours: str,
                     seed: int) -> dict:
    """Keyword arguments for mechanism ``name``: the schema's parameters (``None`` = the paper's
    rule), ε, δ when the mechanism needs it, the relation and the seed."""
    spec = mechanisms()[name]
    known = {p.name for p in spec.params}
    kwargs = {k: v for k, v in params.items() if k in known and v is not None}
    kwargs["epsilon"] = float(epsilon)
    if spec.needs_delta:
        kwargs["delta"] = float(delta)
    kwargs["neighbours"] = neighbours
    kwargs["rng"] = int(seed)
    return kwargs


def run_mechanism(name: str, X: np.ndarray, domain: Domain, *, epsilon: float, delta: float = 1e-6,
                  neighbours: str = "add_remove", seed: int = 0, params: Mapping[str, Any] | None = None
                  ) -> Release:
    """Run mechanism ``name`` once. Raises the mechanism's ValueError/TypeError unchanged; a
    relation the mechanism does not support is refused with a message naming those it does."""
    specs = mechanisms()
    if name not in specs:
        raise ValueError(f"The mechanism {name!r} is not available yet (registered: {', '.join(sorted(specs))}).")
    spec = specs[name]
    if neighbours not in spec.neighbours:
        raise ValueError(f"{spec.title} supports only {' and '.join(r.replace('_', '/') for r in spec.neighbours)} "
                         f"neighbours; switch the neighbouring relation in the sidebar.")
    if spec.max_dim is not None and domain.d > spec.max_dim:
        raise ValueError(f"{spec.title} works in dimension at most {spec.max_dim}; this dataset has d = {domain.d}.")
    kwargs = mechanism_kwargs(name, params or {}, epsilon=epsilon, delta=delta, neighbours=neighbours, seed=seed)
    t0 = time.perf_counter()
    rel = spec.func(X, domain, **kwargs)
    rel.seconds = time.perf_counter() - t0
    return rel


@dataclass(frozen=True)
class W1Value:
    """W1 in unit-cube l_inf units with a certified interval [lower, upper]."""

    value: float
    lower: float
    upper: float
    method: str
    exact: bool

    def to_dict(self) -> dict:
        return {"value": self.value, "lower": self.lower, "upper": self.upper, "method": self.method,
                "exact": self.exact, "units": "unit cube, l_inf"}

    def text(self) -> str:
        if self.exact or self.upper - self.lower < 1e-12:
            return f"{self.value:.4g}"
        return f"{self.value:.4g} ∈ [{self.lower:.4g}, {self.upper:.4g}]"


def _binned_w1(U: np.ndarray, V: np.ndarray, k: int) -> W1Value:
    """Fallback while transport.py is not there: exact W1 between the two measures binned on a
    k^d grid (cell centres; POT emd on the grid), within h = 1/k of the true W1 (MATH_NOTES,
    'Exact W1 at scale': each binned measure is within h/2 of its original)."""
    import ot

    from .grid import cell_centres, grid_counts

    d = U.shape[1]
    a = grid_counts(U, k).astype(float)
    b = grid_counts(V, k).astype(float)
    a /= a.sum()
    b /= b.sum()
    keep_a, keep_b = a > 0, b > 0
    C = cell_centres(k, d)
    M = np.max(np.abs(C[keep_a][:, None, :] - C[keep_b][None, :, :]), axis=2)
    val = float(ot.emd2(a[keep_a], b[keep_b], M))
    h = 1.0 / k
    return W1Value(val, max(0.0, val - h), val + h, f"binned grid {k}^{d} (POT)", False)


#: Largest n*m for which the dashboard asks for the exact dense POT solve (about 0.3 s); above it the
#: exact grid flow gives a certified interval in well under a second (transport.py, "grid").
DASHBOARD_POT_PAIRS = 1_500_000
#: Cells per axis of the dashboard's grid W1 (interval half-width = one cell's l_inf diameter).
DASHBOARD_GRID = {2: 128, 3: 24}
#: Coarser grid for many small pictures (the "draw again" panel): interval half-width 1/64 in 2-D.
FAST_GRID = {2: 64, 3: 12}


def w1(X: np.ndarray, Y: np.ndarray, domain: Domain, *, fast: bool = False) -> W1Value:
    """W1(X, Y) in unit-cube l_inf units via ``transport.wasserstein1``: exact in 1-D and for small
    sets (POT), otherwise the exact grid flow with its certified interval [value - h, value + h]
    (interactive speed: the dense exact solve takes ~6-15 s at 5000 x 5000 on these machines)."""
    if Y.shape[0] == 0:
        raise ValueError("The synthetic dataset is empty: W1 is undefined.")
    try:
        from .transport import wasserstein1
    except ImportError:
        wasserstein1 = None
    if wasserstein1 is not None:
        n, m, d = X.shape[0], Y.shape[0], domain.d
        if d == 1:
            kw = {"method": "exact_1d"}
        elif n * m <= DASHBOARD_POT_PAIRS // (4 if fast else 1):
            kw = {"method": "pot"}
        else:
            kw = {"method": "grid", "grid": (FAST_GRID if fast else DASHBOARD_GRID).get(d)}
        res = wasserstein1(X, Y, domain=domain, metric="linf", return_result=True, **kw)
        value = float(res.value)
        return W1Value(value, float(res.lower), float(res.upper), str(res.method), bool(res.exact))
    U = domain.to_unit(X)
    V = domain.to_unit(Y)
    if U.shape[1] == 1:
        from scipy.stats import wasserstein_distance

        v = float(wasserstein_distance(U[:, 0], V[:, 0]))
        return W1Value(v, v, v, "exact 1-D (CDF)", True)
    k = {2: 48, 3: 12}.get(U.shape[1], 4)
    return _binned_w1(U, V, k)


# ------------------------------------------------------------------------------------ exports
def report_dict(rel: Release, w1_value: W1Value | None, params: Mapping[str, Any]) -> dict:
    """The JSON report: ``Release.public()`` (no synthetic rows, no owner-side trace) plus W1 and
    the parameters the user chose."""
    out = rel.public(include_synthetic=False)
    out["w1"] = None if w1_value is None else w1_value.to_dict()
    out["requested_params"] = to_jsonable(dict(params))
    return out


def report_json(rel: Release, w1_value: W1Value | None, params: Mapping[str, Any]) -> str:
    return json.dumps(to_jsonable(report_dict(rel, w1_value, params)), indent=2)


def synthetic_csv(rel: Release) -> bytes:
    return rel.synthetic_frame().to_csv(index=False).encode("utf-8")


# ------------------------------------------------------------------------------------ sweeps
def sweep(name: str, data_fn: Callable[[int, np.random.Generator], tuple[np.ndarray, Domain]], *,
          ns: Sequence[int], epsilons: Sequence[float], reps: int, delta: float = 1e-6,
          neighbours: str = "add_remove", seed: int = 0, params: Mapping[str, Any] | None = None,
          progress: Callable[[float, str], None] | None = None):
    """W1 of mechanism ``name`` over a grid of (n, ε) with ``reps`` repeats.

    ``data_fn(n, rng)`` returns fresh data of size n and its public domain. Returns a DataFrame
    with columns n, epsilon, rep, eps_n, w1, w1_lower, w1_upper, bound, seconds.
    """
    import pandas as pd

    r = check_int(reps, "reps", "sweep", low=1, high=100)
    rows = []
    total = len(ns) * len(epsilons) * r
    done = 0
    master = np.random.default_rng(seed)
    for n in ns:
        for eps in epsilons:
            for rep in range(r):
                rng = np.random.default_rng(master.integers(2**31))
                X, dom = data_fn(int(n), rng)
                rel = run_mechanism(name, X, dom, epsilon=eps, delta=delta, neighbours=neighbours,
                                    seed=int(rng.integers(2**31)), params=params)
                w = w1(X, rel.synthetic, dom)
                rows.append({"n": int(n), "epsilon": float(eps), "rep": rep, "eps_n": float(eps) * int(n),
                             "w1": w.value, "w1_lower": w.lower, "w1_upper": w.upper,
                             "bound": np.nan if rel.bound is None else float(rel.bound), "seconds": rel.seconds})
                done += 1
                if progress is not None:
                    progress(done / total, f"{name}: n={n}, ε={eps:g}, repeat {rep + 1}/{r}")
    return pd.DataFrame(rows)


def fit_slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope and intercept of log y against log x (positive values only)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    keep = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 2 or np.unique(x[keep]).size < 2:
        return float("nan"), float("nan")
    slope, icpt = np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)
    return float(slope), float(icpt)


def compare(names: Sequence[str], X: np.ndarray, domain: Domain, *, epsilon: float, delta: float,
            neighbours: str, seed: int, progress: Callable[[float, str], None] | None = None):
    """Run every mechanism in ``names`` on the same data and ε with default parameters.

    Returns (DataFrame of one row per mechanism, {name: synthetic array}). A mechanism that refuses
    the settings gets its error message in the ``status`` column instead of a result.
    """
    import pandas as pd

    rows, synth = [], {}
    for i, name in enumerate(names):
        spec = mechanisms()[name]
        row = {"mechanism": name, "title": spec.title, "status": "ok", "reason": ""}
        try:
            rel = run_mechanism(name, X, domain, epsilon=epsilon, delta=delta, neighbours=neighbours, seed=seed)
            w = w1(X, rel.synthetic, domain)
            row.update({"w1": w.value, "w1_interval": w.text(), "seconds": rel.seconds, "epsilon": rel.epsilon,
                        "delta": rel.delta, "neighbours": rel.neighbours, "privacy": rel.privacy,
                        "bound": rel.bound, "bound_kind": rel.bound_kind, "n_synthetic": rel.synthetic.shape[0]})
            synth[name] = rel.synthetic
        except (ValueError, TypeError) as exc:
            row["status"] = "not run"
            row["reason"] = str(exc)
        rows.append(row)
        if progress is not None:
            progress((i + 1) / len(names), f"{spec.title} done")
    return pd.DataFrame(rows), synth


def resampler(X: np.ndarray, domain: Domain) -> Callable[[int, np.random.Generator], tuple[np.ndarray, Domain]]:
    """``data_fn`` for :func:`sweep`: n rows drawn from X (without replacement when n <= len(X)),
    i.e. fresh samples from the dataset's empirical distribution, on the same public domain."""
    X = np.asarray(X, dtype=float)

    def draw(n: int, rng: np.random.Generator) -> tuple[np.ndarray, Domain]:
        idx = rng.choice(X.shape[0], size=int(n), replace=int(n) > X.shape[0])
        return X[idx], domain

    return draw


def theory_exponent(name: str, d: int, params: Mapping[str, Any] | None = None) -> tuple[float, str]:
    """The exponent a of W1 ≍ (εn)^a in the papers' rates, up to logarithmic factors.

    PMM/PSMM (seed 000, Corollaries 8 and 12), the Haar walk (seed 001, Theorem 3.1 and folding),
    flat histograms and PE (seed 003, Theorem 4.1): a = -1 for d = 1 and -1/d for d >= 2 (with log
    factors at d <= 2). Sparse marginals (seed 002, Theorem 1): -1/s for s-sparse queries. Low-dim
    (seed 004, Theorem 4.2): -1/d' in the d'-dimensional subspace.
    """
    params = dict(params or {})
    if name == "sparse_marginals":
        s = int(params.get("s") or params.get("sparsity") or min(2, d))
        return (-1.0 if s == 1 else -1.0 / s), f"-1/s with s = {s} (seed 002, Theorem 1), up to logs"
    if name == "low_dim":
        dp = int(params.get("target_dim") or params.get("d_prime") or 2)
        return (-1.0 if dp == 1 else -1.0 / dp), f"-1/d' with d' = {dp} (seed 004, Theorem 4.2), up to logs"
    if d == 1:
        return -1.0, "-1 for d = 1, up to log factors"
    return -1.0 / d, f"-1/d = {-1.0 / d:.3g}, up to log factors"


# -------------------------------------------------------------------------------------- audit
PAIR_KINDS = ("add", "remove", "move")
STATISTICS = ("count in the box around the point", "synthetic size", "mean of the first coordinate")


def audit_pair(X: np.ndarray, domain: Domain, kind: str, point: Sequence[float], *, n: int = 300,
               seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A neighbouring pair (D, D') for the Audit page: D is ``n`` rows of X (fixed seed); D' adds
    ``point`` (``"add"``), removes the row of D nearest to it (``"remove"``) or moves that row onto it
    (``"move"``), via ``audit.neighbouring_pair``. ``point`` is in domain units."""
    from .audit import neighbouring_pair

    if kind not in PAIR_KINDS:
        raise param_error("audit_pair", "kind", "one of " + ", ".join(repr(k) for k in PAIR_KINDS), kind)
    n = check_int(n, "n", "audit_pair", low=2, high=100_000)
    p = np.asarray(point, dtype=float).reshape(1, -1)
    if p.shape[1] != domain.d:
        raise ValueError(f"The audit point must have {domain.d} coordinates. Got {p.shape[1]}.")
    rng = np.random.default_rng(seed)
    X = np.asarray(X, dtype=float)
    D = X[rng.choice(X.shape[0], size=min(n, X.shape[0]), replace=False)]
    nearest = int(np.argmin(np.max(np.abs(domain.to_unit(D) - domain.to_unit(p)), axis=1)))
    return neighbouring_pair(D, kind, point=None if kind == "remove" else p[0], index=nearest)


def pair_epsilon(kind: str, neighbours: str, epsilon: float) -> tuple[float, str]:
    """The ε the release guarantees for this pair, and why: ε for a pair of the mechanism's relation,
    2ε for a move under add/remove (a removal then an addition: group privacy). An add/remove pair
    is not covered by the replace relation (the sizes differ): ValueError."""
    if neighbours == "replace" and kind != "move":
        raise ValueError("Under 'replace' neighbours the datasets differ by moving one point: choose 'move', or "
                         "switch the sidebar's relation to add/remove.")
    if neighbours == "add_remove" and kind == "move":
        return 2.0 * float(epsilon), "a move is a removal then an addition: 2ε by group privacy"
    return float(epsilon), "a neighbouring pair of the release's relation"


def audit_statistic(kind: str, point: Sequence[float], domain: Domain, half_width: float = 1 / 16
                    ) -> Callable[[Release], float]:
    """A scalar statistic of a release's synthetic data (post-processing, so as private as it): the
    number of synthetic points in the box of half-width ``half_width`` (unit-cube units) around
    ``point`` — an event with power, as DESIGN.md asks —, the synthetic size, or a coordinate mean."""
    from .audit import coordinate_mean, count_in_box, synthetic_size

    if kind not in STATISTICS:
        raise param_error("audit_statistic", "kind", "one of " + ", ".join(repr(k) for k in STATISTICS), kind)
    if kind == "synthetic size":
        return synthetic_size()
    if kind == "mean of the first coordinate":
        return coordinate_mean(0)
    h = check_float(half_width, "half_width", "audit_statistic", low=0.0, high=1.0, low_open=True)
    c = domain.to_unit(np.asarray(point, dtype=float).reshape(1, -1))[0]
    lo = domain.from_unit(np.clip(c - h, 0.0, 1.0).reshape(1, -1))[0]
    hi = domain.from_unit(np.clip(c + h, 0.0, 1.0).reshape(1, -1))[0]
    return count_in_box(lo, hi)


def run_audit(name: str, D: np.ndarray, D2: np.ndarray, domain: Domain, *, statistic: Callable[[Release], float],
              trials: int, epsilon: float, declared_epsilon: float, delta: float, neighbours: str, seed: int,
              params: Mapping[str, Any] | None = None, progress: Callable[[int, int], None] | None = None):
    """``audit.audit`` of mechanism ``name`` (run at ``epsilon``) on the pair, against the declared
    (``declared_epsilon``, δ): δ is the sidebar's for approximate-DP mechanisms, 0 otherwise."""
    from .audit import audit, from_registry

    spec = mechanisms()[name]
    if neighbours not in spec.neighbours:
        raise ValueError(f"{spec.title} supports only {' and '.join(r.replace('_', '/') for r in spec.neighbours)} "
                         "neighbours; switch the neighbouring relation in the sidebar.")
    kwargs = mechanism_kwargs(name, params or {}, epsilon=epsilon, delta=delta, neighbours=neighbours, seed=0)
    kwargs.pop("rng")
    mech = from_registry(name, domain, **kwargs)
    return audit(mech, D, D2, statistic=statistic, trials=int(trials), epsilon=float(declared_epsilon),
                 delta=float(delta) if spec.needs_delta else 0.0, rng=int(seed), progress=progress)


# ---------------------------------------------------------------------------- sparse marginals
def sparse_loss(X: np.ndarray, Y: np.ndarray, domain: Domain, s: int) -> float:
    """The realised utility loss of seed 002 Eq. (1) (largest W1 over the s-marginals, l_inf, unit
    cube) — computed from the private data: owner-side."""
    from .mechanisms.sparse_marginals import sparse_utility_loss

    return float(sparse_utility_loss(X, Y, int(s), domain))


def certificate_sweep(X: np.ndarray, domain: Domain, *, epsilons: Sequence[float], seeds: Sequence[int],
                      params: Mapping[str, Any] | None = None, progress: Callable[[float, str], None] | None = None):
    """Certificate (private) and realised utility loss (owner-side) of sparse_marginals over ε and
    seeds, replace neighbours. Returns a DataFrame (epsilon, seed, certificate, loss, terms...)."""
    import pandas as pd

    rows = []
    total = len(epsilons) * len(seeds)
    for i, eps in enumerate(epsilons):
        for j, sd in enumerate(seeds):
            rel = run_mechanism("sparse_marginals", X, domain, epsilon=eps, neighbours="replace", seed=int(sd),
                                params=params)
            cert = rel.params["certificate_key"]
            terms = rel.trace["certificate"][cert]
            rows.append({"epsilon": float(eps), "seed": int(sd), "certificate": float(rel.bound),
                         "loss": sparse_loss(X, rel.synthetic, domain, rel.params["s"]),
                         "discretisation": terms["discretisation"],
                         "privatisation": terms["privatisation_quantile"], "projection": terms["projection"]})
            if progress is not None:
                progress((i * len(seeds) + j + 1) / total, f"ε = {eps:g}, seed {sd}")
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------- low-dim
def angle_sweep(X: np.ndarray, domain: Domain, *, epsilons: Sequence[float], reps: int, seed: int = 0,
                params: Mapping[str, Any] | None = None, progress: Callable[[float, str], None] | None = None):
    """Largest principal angle (degrees) between the private and the true top-d' subspaces of
    ``low_dim`` over ε and repeats (owner-side: the true subspace needs the data)."""
    import pandas as pd

    rows = []
    total = len(epsilons) * reps
    for i, eps in enumerate(epsilons):
        for r in range(reps):
            rel = run_mechanism("low_dim", X, domain, epsilon=eps, neighbours="replace", seed=seed + r, params=params)
            ang = np.asarray(rel.trace["owner"]["principal_angles"], dtype=float)
            rows.append({"epsilon": float(eps), "rep": r, "angle": float(np.degrees(ang.max())) if ang.size else 0.0,
                         "w1_bound": rel.bound})
            if progress is not None:
                progress((i * reps + r + 1) / total, f"ε = {eps:g}, repeat {r + 1}/{reps}")
    return pd.DataFrame(rows)


def digits_synthesis(epsilon: float, target_dim: int, *, seed: int = 0, per_class: int = 6,
                     subroutine: str = "pmm") -> tuple[np.ndarray, np.ndarray]:
    """Seed 004 Section 5's picture: ``low_dim`` run separately on each class of the bundled digits
    (8×8 images, public domain [0, 1]^64, replace neighbours), ``per_class`` synthetic images each.
    Each class is a disjoint part of the data, so the whole release is ε-DP (parallel composition)."""
    data = real_dataset("digits")
    if data.labels is None:
        raise ValueError("The bundled digits dataset has no labels.")
    images, labels = [], []
    for c in np.unique(data.labels):
        Xc = data.X[data.labels == c]
        rel = run_mechanism("low_dim", Xc, data.domain, epsilon=epsilon, neighbours="replace", seed=seed + int(c),
                            params={"target_dim": int(target_dim), "subroutine": subroutine})
        U = data.domain.to_unit(rel.synthetic)
        pick = np.random.default_rng(seed).choice(U.shape[0], size=min(per_class, U.shape[0]), replace=False)
        images.append(U[pick])
        labels += [c] * len(pick)
    return np.vstack(images), np.asarray(labels)

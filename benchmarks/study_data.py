"""Datasets of the defaults study and of the peers benchmark, each with DECLARED public bounds.

Shared by ``benchmarks/defaults_study.py`` and ``benchmarks/bench_peers.py`` so that both measure the
same tables. Every table comes with a :class:`dpsynth_core.Domain` whose bounds are written here from
what the columns mean (units, physiology, image statistics), never from the sample's minimum or
maximum; :func:`check_inside` only verifies afterwards that the declared box holds the data (a box
that did not would silently clamp rows).

Tables
    * generators of :mod:`dpsynth_core.datasets`: ``mixture_1d`` (d = 1), ``ring`` (d = 2),
      ``gaussian_mixture`` with three clusters on the diagonal (``gm``, d = 2..6) or at random centres
      (``gmr``: gm's centres sit at 0.2, 0.5 and 0.8 of every axis, in the middle of the cells of a 3-bin grid
      and across those of a 2- or 4-bin one, which a study of grid sizes must not fit);
    * real tables shipped inside scikit-learn (no network): the diabetes study of Efron et al.
      (442 patients, raw units) and the Wisconsin diagnostic breast cancer data (569 tumours), each in
      column subsets of d = 2..6;
    * ``hard``: made hard on purpose, d = 4..6 (see :func:`hard`).

A table is named ``"<family>:<d>"`` (``"diabetes:4"``, ``"gm:3"``, ``"hard:5"``); :func:`load` returns
``(X, domain, labels_or_target)``.
"""

from __future__ import annotations

import functools

import numpy as np

from dpsynth_core import Domain
from dpsynth_core import datasets as dsets

# ----------------------------------------------------------------------------------- real tables
#: Diabetes (Efron, Hastie, Johnstone, Tibshirani 2004; scikit-learn ``load_diabetes(scaled=False)``),
#: raw units. Declared bounds from what each column measures, generous and round:
DIABETES_BOUNDS: dict[str, tuple[float, float]] = {
    "age": (0.0, 100.0),        # years (adults in the study; a human age range)
    "bmi": (10.0, 60.0),        # body-mass index, kg/m^2 (physiological range)
    "bp": (40.0, 160.0),        # average blood pressure, mmHg (physiological range)
    "s1": (50.0, 400.0),        # total serum cholesterol, mg/dL (clinical range)
    "s5": (3.0, 7.0),           # log of serum triglycerides (ln of 20..1100 mg/dL)
    "target": (0.0, 400.0),     # disease progression after one year (the study's score, 0..400 scale)
}
#: Column subsets by dimension (the target is the last column: the regression target of the
#: train-on-synthetic score).
DIABETES_COLUMNS = {
    2: ("bmi", "target"),
    3: ("age", "bmi", "target"),
    4: ("age", "bmi", "bp", "target"),
    5: ("age", "bmi", "bp", "s5", "target"),
    6: ("age", "bmi", "bp", "s1", "s5", "target"),
}

#: Breast cancer Wisconsin (diagnostic), scikit-learn ``load_breast_cancer``: features of the cell
#: nuclei in a digitised image. Declared bounds from what the features are: the radius is in pixels
#: of the image (nuclei well below 40), the texture is a standard deviation of 8-bit grey levels
#: (at most 127.5; declared 0..50 for these images), smoothness, concavity and symmetry are
#: dimensionless ratios below 1/4, 1/2 and 1/2 by construction of the features, and the fractal
#: dimension feature is "coastline approximation - 1", between 0 and 1/5 for a smooth closed curve.
BREAST_BOUNDS: dict[str, tuple[float, float]] = {
    "mean radius": (0.0, 40.0),
    "mean texture": (0.0, 50.0),
    "mean smoothness": (0.0, 0.25),
    "mean concavity": (0.0, 0.5),
    "mean symmetry": (0.0, 0.5),
    "mean fractal dimension": (0.0, 0.2),
}
BREAST_COLUMNS = {
    2: ("mean radius", "mean texture"),
    3: ("mean radius", "mean texture", "mean smoothness"),
    4: ("mean radius", "mean texture", "mean smoothness", "mean concavity"),
    5: ("mean radius", "mean texture", "mean smoothness", "mean concavity", "mean symmetry"),
    6: ("mean radius", "mean texture", "mean smoothness", "mean concavity", "mean symmetry",
        "mean fractal dimension"),
}


@functools.lru_cache(maxsize=None)
def _diabetes_frame():
    from sklearn.datasets import load_diabetes

    raw = load_diabetes(scaled=False, as_frame=True)
    df = raw.data.copy()
    df["target"] = raw.target
    return df


@functools.lru_cache(maxsize=None)
def _breast_frame():
    from sklearn.datasets import load_breast_cancer

    raw = load_breast_cancer(as_frame=True)
    df = raw.data.copy()
    df["malignant"] = 1 - raw.target  # scikit-learn codes benign as 1
    return df


def diabetes(d: int) -> tuple[np.ndarray, Domain, np.ndarray]:
    cols = DIABETES_COLUMNS[d]
    df = _diabetes_frame()
    dom = Domain([DIABETES_BOUNDS[c][0] for c in cols], [DIABETES_BOUNDS[c][1] for c in cols], cols)
    return df[list(cols)].to_numpy(float), dom, df["target"].to_numpy(float)


def breast(d: int) -> tuple[np.ndarray, Domain, np.ndarray]:
    cols = BREAST_COLUMNS[d]
    df = _breast_frame()
    dom = Domain([BREAST_BOUNDS[c][0] for c in cols], [BREAST_BOUNDS[c][1] for c in cols], cols)
    return df[list(cols)].to_numpy(float), dom, df["malignant"].to_numpy(int)


# ------------------------------------------------------------------------------- the hard table
def hard(n: int, d: int, rng: int = 0) -> tuple[np.ndarray, Domain, np.ndarray]:
    """Made hard on purpose, in ``[0, 1]^d``, d = 4..6 (public domain: the unit cube).

    * 45 %: a closed curve (a one-dimensional manifold): a circle of radius 0.3 in the first two
      coordinates, the others moving linearly and sinusoidally along it, plus noise of sd 0.002;
    * 30 % and 10 %: two tight clusters (sd 0.004) at opposite far corners, (0.04, ..., 0.04) and
      (0.96, ..., 0.96);
    * 15 %: heavy tails, 0.5 + 0.05 * (standard Cauchy) in every coordinate, clipped into the cube
      (points outside are clipped, so the declared domain is honest).

    Labels: the component (0 curve, 1 and 2 the clusters, 3 the tail).
    """
    if not 2 <= d <= 8:
        raise ValueError("hard: d in [2, 8]")
    gen = np.random.default_rng(rng)
    comp = gen.choice(4, size=n, p=[0.45, 0.30, 0.10, 0.15])
    X = np.empty((n, d))
    t = gen.random(n)
    curve = np.empty((n, d))
    curve[:, 0] = 0.5 + 0.3 * np.cos(2 * np.pi * t)
    curve[:, 1] = 0.5 + 0.3 * np.sin(2 * np.pi * t)
    for j in range(2, d):
        curve[:, j] = 0.5 + 0.25 * (np.sin(2 * np.pi * (j - 1) * t) if j % 2 else (2 * t - 1))
    curve += 0.002 * gen.standard_normal((n, d))
    c1 = 0.04 + 0.004 * gen.standard_normal((n, d))
    c2 = 0.96 + 0.004 * gen.standard_normal((n, d))
    tail = 0.5 + 0.05 * gen.standard_cauchy((n, d))
    X = np.where((comp == 0)[:, None], curve, np.where((comp == 1)[:, None], c1, np.where((comp == 2)[:, None], c2, tail)))
    return np.clip(X, 0.0, 1.0), Domain.unit(d), comp


# ----------------------------------------------------------------------------- tables with categories
#: The survey's declared domain: numeric age and income, integer hours (0-40) and children (0-8), categorical
#: sex and region (bounds and categories from what the questions allow, not from the rows).
SURVEY_BOUNDS = {"age": (18.0, 90.0), "hours": (0.0, 40.0), "children": (0.0, 8.0), "income": (0.0, 200.0)}
SURVEY_CATEGORIES = {"sex": ("F", "M"), "region": ("north", "east", "south", "west")}
SURVEY_COLUMNS = ("age", "sex", "hours", "children", "region", "income")


def survey(n: int, rng: int = 0) -> tuple[np.ndarray, Domain, np.ndarray]:
    """A generated survey with spiked whole-number columns (docs/marginals.md uses it to fit the defaults).

    * age ~ 18 + 72 Beta(2, 2.5); sex F/M (1/2); region north/east/south/west (0.3, 0.2, 0.3, 0.2);
    * hours (a week's hours of an activity, whole, 0-40): 0 with probability 0.8 - 0.006 (age - 18) (about
      65 % zeros), else 1 + a Poisson(4 + 4 [M]) count, clipped to 40;
    * children (whole, 0-8): Poisson(0.03 (age - 18)) clipped to 8;
    * income (thousands, 0-200): 15 + 0.6 (age - 18) + 8 [M] + 1.5 hours + 10 [south] + 12 Z, clipped.

    Encoded rows (numbers, category indices) and the declared domain, integers ``hours`` and ``children``."""
    gen = np.random.default_rng(rng)
    age = 18.0 + 72.0 * gen.beta(2.0, 2.5, size=n)
    male = gen.random(n) < 0.5
    region = gen.choice(4, size=n, p=(0.3, 0.2, 0.3, 0.2))
    zero = gen.random(n) < np.clip(0.8 - 0.006 * (age - 18.0), 0.0, 1.0)
    hours = np.where(zero, 0, np.minimum(40, 1 + gen.poisson(4.0 + 4.0 * male))).astype(float)
    children = np.minimum(8, gen.poisson(0.03 * (age - 18.0))).astype(float)
    income = np.clip(15 + 0.6 * (age - 18) + 8 * male + 1.5 * hours + 10 * (region == 2) + 12 * gen.standard_normal(n),
                     0.0, 200.0)
    cols = {"age": age, "sex": male.astype(float), "hours": hours, "children": children, "region": region.astype(float),
            "income": income}
    X = np.column_stack([cols[c] for c in SURVEY_COLUMNS])
    num = [c for c in SURVEY_COLUMNS if c in SURVEY_BOUNDS]
    dom = Domain([SURVEY_BOUNDS[c][0] for c in num], [SURVEY_BOUNDS[c][1] for c in num], names=SURVEY_COLUMNS,
                 categories=SURVEY_CATEGORIES, integers=("hours", "children"))
    return X, dom, hours


def clinic_table(n: int, rng: int) -> tuple[np.ndarray, Domain, np.ndarray]:
    """The generated clinic of :func:`dpsynth_core.datasets.clinic` with ``n`` rows drawn with seed ``rng`` (the
    study uses seeds other than the bundled table's)."""
    ds = dsets.clinic(n, rng=rng)
    return np.asarray(ds.X, float), ds.domain, np.zeros(n, int)


# ------------------------------------------------------------------------------------- registry
REAL = {"diabetes": diabetes, "breast": breast}
#: Families whose size is chosen by the study (generators) and the real ones (fixed size).
GENERATED = ("mix1d", "ring", "gm", "gmr", "hard", "survey", "clinic")


def load(name: str, n: int | None = None, data_seed: int = 1000):
    """``(X, domain, y)`` for ``"<family>:<d>"``; generators draw ``n`` rows with ``data_seed``."""
    family, d = name.split(":")
    d = int(d)
    if family in REAL:
        return REAL[family](d)
    if n is None:
        raise ValueError(f"{name}: a generated table needs n")
    if family == "mix1d":
        ds = dsets.mixture_1d(n, rng=data_seed)
        return np.asarray(ds.X), ds.domain, np.asarray(ds.labels)
    if family == "ring":
        ds = dsets.ring(n, rng=data_seed)
        return np.asarray(ds.X), ds.domain, np.zeros(n, int)
    if family == "gm":
        ds = dsets.gaussian_mixture(n, d=d, k=3, spread=0.05, rng=data_seed)
        return np.asarray(ds.X), ds.domain, np.asarray(ds.labels)
    if family == "gmr":  # the same clusters at random centres (gm's sit at 0.2, 0.5, 0.8 of every axis)
        ds = dsets.gaussian_mixture(n, d=d, k=3, spread=0.05, centers="random", rng=data_seed)
        return np.asarray(ds.X), ds.domain, np.asarray(ds.labels)
    if family == "hard":
        return hard(n, d, rng=data_seed)
    if family == "survey":
        return survey(n, rng=data_seed)
    if family == "clinic":
        return clinic_table(n, rng=data_seed)
    raise ValueError(f"unknown table family {family!r}")


def check_inside(X: np.ndarray, dom: Domain) -> int:
    """Number of rows outside the declared box (0 for every table here; checked by the scripts)."""
    lo, hi = dom.lower_array, dom.upper_array
    num = X[:, dom.numeric_index] if dom.is_mixed else X
    return int(np.any((num < lo) | (num > hi), axis=1).sum())

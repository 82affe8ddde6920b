"""Train on synthetic, test on real: does a model learnt from the synthetic rows work on real ones?

:func:`train_synthetic_test_real` fits the same scikit-learn model (same class, same seed) on the
synthetic rows and on real training rows, and scores both on real test rows, next to a constant
baseline learnt from the real training rows. It is the downstream part of
:func:`dpsynth_core.evaluate.report` (docs/evaluate.md, "Downstream"). The idea of scoring synthetic
data by a model trained on it and tested on real data is [EHR17]'s "TSTR".

OWNER VIEW: the scores are computed from the private data without noise; they are not differentially
private. scikit-learn is an optional dependency (``pip install 'dpsynth[ml]'``), imported only here,
inside the function.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .domain import Domain
from .validation import check_float, check_int, param_error

__all__ = ["train_synthetic_test_real", "Downstream", "Scores", "MAX_MODEL_ROWS", "MAX_NATIVE_CATEGORIES"]

_OWNER = "downstream.train_synthetic_test_real"
#: Most rows a model is trained or tested on; larger sets are subsampled with the seed (said in the notes).
MAX_MODEL_ROWS = 200_000
#: Most categories scikit-learn's histogram models take as a categorical feature; a column with more
#: enters as its category index (an ordinal feature), said in the notes.
MAX_NATIVE_CATEGORIES = 255


@dataclass(frozen=True)
class Scores:
    """Scores of one model on the real test rows: accuracy and balanced accuracy (classification) or
    R² (regression); None where undefined (R² of a constant real test target)."""

    accuracy: float | None = None
    balanced_accuracy: float | None = None
    r2: float | None = None

    def to_dict(self) -> dict:
        return {"accuracy": self.accuracy, "balanced_accuracy": self.balanced_accuracy, "r2": self.r2}


@dataclass(frozen=True)
class Downstream:
    """Train on synthetic, test on real, for one target column [EHR17].

    Attributes
    ----------
    target : str
    task : {"classification", "regression"}
        Classification for a categorical target, regression for a numeric one.
    model : str
        The scikit-learn estimator (the same, with the same seed, for every training set).
    features : tuple of str
        Every other column of the domain (numeric values clamped into the bounds; categories by their
        declared index, as categorical features).
    test : {"holdout", "split"}
        "holdout": the real rows passed as ``holdout`` (best: rows the mechanism never saw);
        "split": a share ``test_size`` of ``real`` drawn with the seed, the rest trains the real model
        (if the synthetic data were made from all of ``real``, the mechanism saw the test rows and the
        synthetic score is optimistic).
    n_train_real, n_train_synthetic, n_test : int
    synthetic : Scores
        Trained on the synthetic rows (TSTR).
    real : Scores
        Trained on the real training rows (train on real, test on real): the reference.
    baseline : Scores
        A constant prediction learnt from the real training rows: the majority class (classification)
        or the mean (regression).
    notes : tuple of str
    """

    target: str
    task: str
    model: str
    features: tuple[str, ...]
    test: str
    n_train_real: int
    n_train_synthetic: int
    n_test: int
    synthetic: Scores
    real: Scores
    baseline: Scores
    notes: tuple[str, ...] = ()

    @property
    def metrics(self) -> tuple[str, ...]:
        return ("accuracy", "balanced_accuracy") if self.task == "classification" else ("r2",)

    def to_dict(self) -> dict:
        def pick(s: Scores) -> dict:
            return {m: getattr(s, m) for m in self.metrics}

        return {"target": self.target, "task": self.task, "model": self.model, "features": list(self.features),
                "test": self.test, "n_train_real": self.n_train_real, "n_train_synthetic": self.n_train_synthetic,
                "n_test": self.n_test, "train_on_synthetic": pick(self.synthetic), "train_on_real": pick(self.real),
                "baseline": pick(self.baseline), "notes": list(self.notes)}


def _sklearn():
    try:
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
        from sklearn.metrics import accuracy_score, balanced_accuracy_score, r2_score
        from threadpoolctl import threadpool_limits
    except ImportError:
        raise ImportError("The downstream score (target=...) trains scikit-learn models, and scikit-learn is not "
                          "installed: pip install 'dpsynth[ml]' (or scikit-learn), or leave the target out.") from None
    return (HistGradientBoostingClassifier, HistGradientBoostingRegressor, accuracy_score, balanced_accuracy_score,
            r2_score, threadpool_limits)


def train_synthetic_test_real(real: Any, synthetic: Any, domain: Domain, target: str, *, holdout: Any = None,
                              test_size: float = 0.3, seed: int = 0) -> Downstream:
    """Fit one model on the synthetic rows and one on real rows; score both on real test rows.

    Parameters
    ----------
    real, synthetic : DataFrame or array (n, d)
        Read by ``domain.read`` (as :func:`dpsynth_core.evaluate.report` reads them).
    domain : Domain
    target : str
        The column to predict from every other column: a categorical column (classification:
        accuracy and balanced accuracy, against the majority class) or a numeric one (regression:
        R², against the mean).
    holdout : DataFrame or array, optional
        Real test rows (best: rows the mechanism never saw); all of ``real`` then trains the real model.
    test_size : float in (0, 1), default 0.3
        Without ``holdout``: the share of ``real`` held out (at least one row each side; ``real`` needs
        10 rows).
    seed : int >= 0, default 0
        The split, the subsampling above :data:`MAX_MODEL_ROWS` and the models' ``random_state``.

    Returns
    -------
    Downstream

    Notes
    -----
    The model is scikit-learn's ``HistGradientBoostingClassifier`` or ``...Regressor`` with its
    defaults, categorical features declared as such, fitted on one OpenMP thread (the same model on
    every machine, and no spinning threads on a busy one). A training set holding a single class of
    the target gives the constant model predicting it (said in the notes). Balanced accuracy is the
    mean recall over the classes present in the test rows.

    References
    ----------
    .. [EHR17] C. Esteban, S. L. Hyland, G. Rätsch. Real-valued (Medical) Time Series Generation with
       Recurrent Conditional GANs. arXiv:1706.02633, 2017. See docs/references.md.
    """
    test_size, seed = _checked(domain, target, test_size, seed)
    Cls, Reg, accuracy, balanced, r2, one_thread = _sklearn()
    R = domain.read(real, name="real", owner=_OWNER)
    S = domain.read(synthetic, name="synthetic", owner=_OWNER)
    rng = np.random.default_rng(seed)
    test, train, how = _test_rows(domain, R, holdout, test_size, rng)

    t = domain.names.index(target)
    feats = [j for j in range(domain.d) if j != t]
    classify = target in domain.categories
    notes: list[str] = []
    X_test, y_test = _prepared(domain, test, t, feats, classify, rng, seed, "the real test rows", notes)
    X_real, y_real = _prepared(domain, train, t, feats, classify, rng, seed, "the real training rows", notes)
    X_syn, y_syn = _prepared(domain, S, t, feats, classify, rng, seed, "the synthetic rows", notes)
    names, cats = _features(domain, feats, notes)
    Model = Cls if classify else Reg
    options = {"random_state": seed, "categorical_features": np.array(cats) if any(cats) else None}

    def predict(X: np.ndarray, y: np.ndarray, who: str) -> np.ndarray:
        if classify and np.unique(y).size < 2:  # one class only: the model is that constant
            notes.append(f"The {who} training rows hold one class of {target!r} only "
                         f"({domain.categories[target][int(y[0])]!r}); that model predicts it for every row.")
            return np.full(X_test.shape[0], y[0])
        model = Model(**options)
        with one_thread(limits=1):  # on two loaded cores the default pool made a 0.2 s fit take a minute
            model.fit(X, y)
            return model.predict(X_test)

    def scores(pred: np.ndarray) -> Scores:
        if classify:
            with warnings.catch_warnings():  # a predicted class absent from the test rows is not an error
                warnings.simplefilter("ignore")
                return Scores(accuracy=float(accuracy(y_test, pred)), balanced_accuracy=float(balanced(y_test, pred)))
        return Scores(r2=None if np.ptp(y_test) == 0 else float(r2(y_test, pred)))

    if not classify and np.ptp(y_test) == 0:
        notes.append(f"{target!r} is constant in the real test rows: R² is undefined.")
    constant = np.full(X_test.shape[0], int(np.argmax(np.bincount(y_real))) if classify else float(y_real.mean()))
    syn, rea = scores(predict(X_syn, y_syn, "synthetic")), scores(predict(X_real, y_real, "real"))
    return Downstream(target, "classification" if classify else "regression", f"{Model.__name__}(random_state={seed})",
                      tuple(names), how, int(X_real.shape[0]), int(X_syn.shape[0]), int(X_test.shape[0]), syn, rea,
                      scores(constant), tuple(notes))


def _checked(domain: Any, target: Any, test_size: Any, seed: Any) -> tuple[float, int]:
    """The domain and the target (a column, with at least one other to predict it from) checked; the test share
    and the seed."""
    if not isinstance(domain, Domain):
        raise param_error(_OWNER, "domain", "a Domain", domain, kind=TypeError)
    if not isinstance(target, str) or target not in domain.names:
        raise param_error(_OWNER, "target", f"a column of the domain ({', '.join(map(repr, domain.names))})",
                          target, kind=ValueError if isinstance(target, str) else TypeError)
    if domain.d < 2:
        raise param_error(_OWNER, "target", "a column of a domain with at least one other column to predict it "
                          "from", target)
    test_size = check_float(test_size, "test_size", _OWNER, low=0.0, high=1.0, low_open=True, high_open=True)
    return test_size, check_int(seed, "seed", _OWNER, low=0)


def _test_rows(domain: Domain, R: np.ndarray, holdout: Any, test_size: float,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, str]:
    """The real test rows, the real training rows and how they were chosen: the ``holdout`` rows (all of
    ``real`` trains), or a random share ``test_size`` of ``real`` (at least one row each side; 10 rows needed)."""
    if holdout is not None:
        return domain.read(holdout, name="holdout", owner=_OWNER), R, "holdout"
    if R.shape[0] < 10:
        raise param_error(_OWNER, "real", "at least 10 rows to hold out a test share (or pass holdout=...)",
                          f"{R.shape[0]} rows")
    perm = rng.permutation(R.shape[0])
    n_test = max(1, min(R.shape[0] - 1, round(test_size * R.shape[0])))
    return R[perm[:n_test]], R[perm[n_test:]], "split"


def _features(domain: Domain, feats: list[int], notes: list[str]) -> tuple[list[str], list[bool]]:
    """The features' names and which of them the models take as categorical: the categorical columns with at
    most :data:`MAX_NATIVE_CATEGORIES` categories; wider ones enter as their category index (said in the notes)."""
    names = [domain.names[j] for j in feats]
    cats = [n in domain.categories and len(domain.categories[n]) <= MAX_NATIVE_CATEGORIES for n in names]
    wide = [n for n in names if n in domain.categories and len(domain.categories[n]) > MAX_NATIVE_CATEGORIES]
    if wide:
        notes.append(f"{wide} have more than {MAX_NATIVE_CATEGORIES} categories and enter the models as their "
                     "category index (an ordinal feature).")
    return names, cats


def _prepared(domain: Domain, A: np.ndarray, t: int, feats: list[int], classify: bool, rng: np.random.Generator,
              seed: int, role: str, notes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Features (numeric in their units, clamped; categories as indices) and target of encoded rows."""
    if A.shape[0] > MAX_MODEL_ROWS:
        notes.append(f"{role[0].upper() + role[1:]} were subsampled from {A.shape[0]} to {MAX_MODEL_ROWS} rows "
                     f"(downstream.MAX_MODEL_ROWS) with seed {seed}.")
        A = A[np.sort(rng.choice(A.shape[0], MAX_MODEL_ROWS, replace=False))]
    U = domain.to_unit(A, owner=_OWNER)  # numeric columns clamped into [0, 1]; categories stay indices

    def column(j: int) -> np.ndarray:
        name = domain.names[j]
        if name in domain.categories:
            return U[:, j]
        k = domain.numeric_names.index(name)
        return domain.lower[k] + U[:, j] * (domain.upper[k] - domain.lower[k])

    X = np.column_stack([column(j) for j in feats])
    y = U[:, t].astype(np.int64) if classify else column(t)
    return X, y

"""Empirical privacy audit: a statistically valid lower bound on a mechanism's ε.

A mechanism M is (ε, δ)-DP when, for every neighbouring pair (D, D') and every event E,

.. math:: P(M(D) \\in E) \\le e^{\\varepsilon} P(M(D') \\in E) + \\delta
          \\quad\\text{and}\\quad P(M(D') \\in E) \\le e^{\\varepsilon} P(M(D) \\in E) + \\delta.

:func:`audit` runs M many times on a fixed pair, reduces every release to a scalar statistic s,
and tests threshold events :math:`E = \\{s \\ge t\\}` and :math:`\\{s \\le t\\}`. With one-sided
Clopper–Pearson bounds :math:`p_{lo} \\le p = P_D(E)` and :math:`q_{hi} \\ge q = P_{D'}(E)` that all
hold simultaneously with probability at least :math:`1-\\alpha` (Bonferroni), every event gives

.. math:: \\hat\\varepsilon_E = \\log\\frac{p_{lo} - \\delta}{q_{hi}} \\le \\varepsilon,

and the same with D and D' swapped; the audit reports the largest (or 0). So an (ε, δ)-DP
mechanism gets :math:`\\hat\\varepsilon \\le \\varepsilon` with probability at least 1 - α, and an
audit that finds :math:`\\hat\\varepsilon > \\varepsilon` has caught a privacy bug with that confidence
(the approach of [JUO20] and [NST+21], with the exact binomial intervals of [CP34]; docs/audit.md).

Selection without double dipping
--------------------------------
Thresholds chosen from the same samples that are then tested would bias the bound upwards. By
default a ``selection`` share of the trials (independent of the others) is used only to choose
candidate thresholds and to rank events; the ``max_events`` best (event, direction) pairs are then
tested on the remaining trials with the Bonferroni correction over those pairs. Fixed thresholds
given by the caller (``thresholds=array``) are data-independent, so all trials are used for testing
and the correction covers every event.

Power (docs/audit.md, "Events with power"): choose a statistic the neighbouring pair moves a lot, e.g. the noisy count of
the finest cell around the added point, not a coarse region's count.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from . import partition
from .audit_statistics import coordinate_mean, count_in_box, count_shift, synthetic_size, trace_value  # noqa: F401
from .mechanisms import SETTINGS, bind, load_all
from .validation import check_choice, check_float, check_int, check_points, check_rng, param_error

__all__ = [
    "AuditResult",
    "AuditEvent",
    "audit",
    "detection_limit",
    "planned_limit",
    "trials_for_limit",
    "runs_for_limit",
    "MAX_TRIALS",
    "HEADROOM",
    "teaching_audit",
    "teaching_statistics",
    "BROKEN_PMM",
    "PATH_STATISTIC",
    "clopper_pearson",
    "neighbouring_pair",
    "NEIGHBOUR_KINDS",
    "relation_of",
    "from_registry",
    "pair_near",
    "pair_epsilon",
    "statistic_named",
    "tree_path_statistic",
    "STATISTICS",
    "count_in_box",
    "synthetic_size",
    "coordinate_mean",
    "trace_value",
    "count_shift",
]

_OWNER = "audit"

#: Most runs per dataset an audit takes.
MAX_TRIALS = 10_000_000
#: How far above the declared ε an audit that may raise its number of runs (``max_trials``) puts its
#: detection limit: a violation seen through an event that has probability 1/e on one dataset and
#: never occurs on the other is then shown (its bound is about the limit minus 1).
HEADROOM = 1.0

#: Kinds of neighbouring pairs and the relation each one belongs to.
NEIGHBOUR_KINDS: dict[str, str] = {"add": "add_remove", "remove": "add_remove", "move": "replace"}


# ---------------------------------------------------------------------------- confidence bounds
def clopper_pearson(k: Any, n: int, level: float, side: str) -> np.ndarray:
    """One-sided Clopper–Pearson (exact binomial) bound for p from k successes in n trials.

    .. math:: p_{lo} = B^{-1}(\\beta; k, n-k+1) \\;(0 \\text{ if } k=0), \\qquad
              p_{hi} = B^{-1}(1-\\beta; k+1, n-k) \\;(1 \\text{ if } k=n)

    so that :math:`P(p_{lo} > p) \\le \\beta` (``side="lower"``) or :math:`P(p_{hi} < p) \\le \\beta`
    (``side="upper"``), with :math:`B^{-1}` the Beta quantile function.

    Parameters
    ----------
    k : int or int array, counts in [0, n]
    n : int >= 1
    level : float in (0, 1)
        β, the error probability of this one bound.
    side : {"lower", "upper"}
    """
    kk = np.asarray(k, dtype=float)
    nn = float(n)
    if side == "lower":
        with np.errstate(invalid="ignore"):
            out = stats.beta.ppf(level, kk, nn - kk + 1.0)
        return np.where(kk <= 0, 0.0, out)
    if side == "upper":
        with np.errstate(invalid="ignore"):
            out = stats.beta.ppf(1.0 - level, kk + 1.0, nn - kk)
        return np.where(kk >= nn, 1.0, out)
    raise param_error("clopper_pearson", "side", "one of 'lower', 'upper'", side)


# ----------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class AuditEvent:
    """One tested event :math:`\\{s \\ge t\\}` or :math:`\\{s \\le t\\}` and its bound.

    ``direction`` "D>D'" means the bound :math:`\\log((p_{lo}-\\delta)/q_{hi})` with p from D and q
    from D'; "D'>D" swaps the datasets. ``p_hat``, ``q_hat`` are the test frequencies on D and D'.
    """

    kind: str  # ">=" or "<="
    threshold: float
    direction: str  # "D>D'" or "D'>D"
    p_hat: float
    q_hat: float
    numerator_lower: float  # Clopper–Pearson lower bound of the larger side's probability
    denominator_upper: float  # Clopper–Pearson upper bound of the other side's probability
    epsilon_lower: float  # log((numerator_lower - δ) / denominator_upper), -inf when not positive

    def describe(self) -> str:
        a, b = ("D", "D'") if self.direction == "D>D'" else ("D'", "D")
        return (f"s {self.kind} {self.threshold:.6g}: P_{a} >= {self.numerator_lower:.4g}, "
                f"P_{b} <= {self.denominator_upper:.4g} (observed {self.p_hat:.4g} on D, {self.q_hat:.4g} on D')")

    def to_dict(self) -> dict:
        return {"kind": self.kind, "threshold": self.threshold, "direction": self.direction,
                "p_hat": self.p_hat, "q_hat": self.q_hat, "numerator_lower": self.numerator_lower,
                "denominator_upper": self.denominator_upper, "epsilon_lower": self.epsilon_lower}


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`.

    Attributes
    ----------
    epsilon_lower : float >= 0
        ε̂, a lower bound on the mechanism's ε valid with probability at least 1 - ``alpha``.
    epsilon_declared, delta : float
        The guarantee under test.
    best_event : AuditEvent or None
        The event that gave ε̂ (None when no event gives a positive bound).
    trials : int
        Runs per dataset.
    samples_D, samples_D_prime : ndarray (trials,)
        The statistic of every run (selection and test runs).
    hist_D, hist_D_prime : ndarray (bins,)
        Empirical probabilities of the statistic on the bins ``bin_edges`` (for the pictures).
    bin_edges : ndarray (bins + 1,)
    alpha : float
        Overall error probability of the bound.
    events_tested : int
        Number of (event, direction) pairs the Bonferroni correction covers.
    selection_trials : int
        Runs per dataset spent on choosing the events (0 with fixed thresholds).
    events : tuple of AuditEvent
        Every tested (event, direction) pair with its bound.
    detection_limit : float
        The largest ε̂ this audit could have reported (:func:`detection_limit` of its test runs and
        tested events): it cannot see a violation above it.
    requested_trials : int or None
        The runs per dataset asked for, when the audit raised them (``trials`` is what ran).
    """

    epsilon_lower: float
    epsilon_declared: float
    delta: float
    best_event: AuditEvent | None
    trials: int
    samples_D: np.ndarray = field(repr=False)
    samples_D_prime: np.ndarray = field(repr=False)
    hist_D: np.ndarray = field(repr=False)
    hist_D_prime: np.ndarray = field(repr=False)
    bin_edges: np.ndarray = field(repr=False)
    alpha: float = 0.05
    events_tested: int = 0
    selection_trials: int = 0
    events: tuple = field(default=(), repr=False)
    detection_limit: float = math.inf
    requested_trials: int | None = None

    @property
    def violation(self) -> bool:
        """True when the audit caught the claim: ε̂ > declared ε."""
        return self.epsilon_lower > self.epsilon_declared

    @property
    def decided(self) -> bool:
        """True when the audit could have shown a violation of the declared ε: a violation was found, or
        its detection limit is above the declared ε."""
        return self.violation or self.detection_limit > self.epsilon_declared

    @property
    def passed(self) -> bool:
        """True when the audit found no violation and could have shown one (its detection limit is above
        the declared ε). False for a violation, and for an audit that cannot decide."""
        return self.decided and not self.violation

    @property
    def verdict(self) -> str:
        """"violation", "no violation found", or "cannot decide" (the declared ε is at or above the
        detection limit: no outcome of this audit could exceed it)."""
        return "violation" if self.violation else "no violation found" if self.passed else "cannot decide"

    def limit_sentence(self) -> str:
        """What the audit can see, in plain words: its detection limit with its number of runs."""
        return (f"this audit cannot see violations above ε ≈ {self.detection_limit:.3g} with {self.trials:,} "
                f"releases per dataset ({self.confidence:.0%} confidence)")

    def sentence(self) -> str:
        """The verdict in plain words, with the detection limit (and, when the audit cannot decide, how
        many releases per dataset would let it see a violation of the declared ε)."""
        eps, lim = self.epsilon_declared, self.limit_sentence()
        raised = (f" The audit raised its releases from {self.requested_trials:,} to {self.trials:,} per dataset to "
                  f"see above ε = {eps:.3g}." if self.requested_trials not in (None, self.trials) else "")
        if self.violation:
            return (f"VIOLATION: ε̂ = {self.epsilon_lower:.3g} > declared ε = {eps:.3g} with {self.confidence:.0%} "
                    f"confidence: the privacy claim is false.{raised}")
        if self.passed:
            return (f"No violation found: ε̂ = {self.epsilon_lower:.3g} ≤ declared ε = {eps:.3g}; {lim}.{raised} "
                    f"A pass is not a proof of privacy.")
        need = self.trials_needed(eps)
        more = (f" Seeing one above ε = {eps:.3g} needs at least {need:,} releases per dataset." if need is not None
                else "")
        return (f"Cannot decide: {lim}, and the declared ε = {eps:.3g} is above that, so no result of this audit "
                f"could show a violation (ε̂ = {self.epsilon_lower:.3g}).{more}")

    def trials_needed(self, epsilon: float) -> int | None:
        """Runs per dataset this audit (its events, selection share, α and δ) would need for a detection limit
        above ``epsilon`` (None beyond :data:`MAX_TRIALS`)."""
        n_test = runs_for_limit(epsilon, max(self.events_tested, 1), alpha=self.alpha, delta=self.delta)
        if n_test is None or not self.selection_trials:
            return n_test
        return trials_for_limit(epsilon, alpha=self.alpha, delta=self.delta, max_events=max(self.events_tested, 1),
                                selection=self.selection_trials / self.trials)

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    def band(self) -> tuple[np.ndarray, np.ndarray]:
        """The (ε, δ) band for D' around D's histogram, bin by bin:
        :math:`[e^{-\\varepsilon}(h_D - \\delta),\\; e^{\\varepsilon} h_D + \\delta]` clipped to [0, 1]
        (a bin is an event, so a DP mechanism keeps D''s true bin probabilities inside the band of
        D's true ones)."""
        e = math.exp(min(self.epsilon_declared, 700.0))
        lo = np.clip((self.hist_D - self.delta) / e, 0.0, 1.0)
        hi = np.clip(self.hist_D * e + self.delta, 0.0, 1.0)
        return lo, hi

    def summary(self) -> str:
        verdict = {"violation": "VIOLATION: the declared ε is too small"}.get(self.verdict, self.verdict)
        event = "" if self.best_event is None else f"; best event {self.best_event.describe()}"
        return (f"ε̂ = {self.epsilon_lower:.4g} vs declared ε = {self.epsilon_declared:.4g} (δ = {self.delta:.3g}), "
                f"{self.confidence:.0%} confidence, {self.trials} trials per dataset, detection limit "
                f"{self.detection_limit:.4g}: {verdict}{event}")

    def to_dict(self) -> dict:
        return {
            "epsilon_lower": self.epsilon_lower,
            "epsilon_declared": self.epsilon_declared,
            "delta": self.delta,
            "passed": self.passed,
            "verdict": self.verdict,
            "detection_limit": self.detection_limit,
            "alpha": self.alpha,
            "trials": self.trials,
            "requested_trials": self.requested_trials,
            "selection_trials": self.selection_trials,
            "events_tested": self.events_tested,
            "best_event": None if self.best_event is None else self.best_event.to_dict(),
            "hist_D": self.hist_D.tolist(),
            "hist_D_prime": self.hist_D_prime.tolist(),
            "bin_edges": self.bin_edges.tolist(),
        }


# -------------------------------------------------------------------------------- the audit
def _collect(mechanism, X, gens, statistic, progress, done0, total) -> np.ndarray:
    out = np.empty(len(gens))
    for i, g in enumerate(gens):
        rel = mechanism(X, g)
        s = statistic(rel)
        if isinstance(s, bool) or not isinstance(s, (numbers.Real, np.bool_)):
            try:
                s = float(np.asarray(s).item())
            except (TypeError, ValueError):
                raise param_error(_OWNER, "statistic", "a callable returning a real number", s,
                                  kind=TypeError) from None
        s = float(s)
        if math.isnan(s):
            raise ValueError(f"The 'statistic' parameter of {_OWNER} must return a number, not NaN. "
                             f"Got NaN at trial {i}.")
        out[i] = s
        if progress is not None:
            progress((done0 + i + 1) / total, f"{done0 + i + 1} / {total} releases")
    return out


def _candidate_thresholds(values: np.ndarray, max_thresholds: int) -> np.ndarray:
    uniq = np.unique(values)
    if uniq.size <= max_thresholds:
        return uniq
    qs = np.quantile(values, np.linspace(0.0, 1.0, max_thresholds), method="inverted_cdf")
    return np.unique(qs)


def _event_bounds(sD: np.ndarray, sP: np.ndarray, thresholds: np.ndarray, level: float, delta: float):
    """For every threshold and kind (>=, <=) and both directions: (kind, t, dir, p, q, num_lo,
    den_hi, eps). Each bound is one-sided with error ``level``."""
    nD, nP = sD.size, sP.size
    sDs, sPs = np.sort(sD), np.sort(sP)
    rows = []
    for kind in (">=", "<="):
        if kind == ">=":
            kD = nD - np.searchsorted(sDs, thresholds, side="left")
            kP = nP - np.searchsorted(sPs, thresholds, side="left")
        else:
            kD = np.searchsorted(sDs, thresholds, side="right")
            kP = np.searchsorted(sPs, thresholds, side="right")
        pD_lo = clopper_pearson(kD, nD, level, "lower")
        pD_hi = clopper_pearson(kD, nD, level, "upper")
        pP_lo = clopper_pearson(kP, nP, level, "lower")
        pP_hi = clopper_pearson(kP, nP, level, "upper")
        for direction, num_lo, den_hi in (("D>D'", pD_lo, pP_hi), ("D'>D", pP_lo, pD_hi)):
            with np.errstate(divide="ignore", invalid="ignore"):
                eps = np.where(num_lo - delta > 0, np.log(np.maximum(num_lo - delta, 1e-300) / den_hi), -np.inf)
            for i, t in enumerate(thresholds):
                rows.append((kind, float(t), direction, kD[i] / nD, kP[i] / nP, float(num_lo[i]),
                             float(den_hi[i]), float(eps[i])))
    return rows


def _histograms(sD: np.ndarray, sP: np.ndarray, bins: Any):
    allv = np.concatenate([sD, sP])
    if bins is None:
        uniq = np.unique(allv)
        integer = np.allclose(uniq, np.round(uniq))
        if integer and uniq.size <= 200:
            edges = np.arange(uniq[0] - 0.5, uniq[-1] + 1.0, 1.0)
        else:
            lo, hi = float(allv.min()), float(allv.max())
            edges = np.linspace(lo, hi if hi > lo else lo + 1.0, 41)
    elif isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        nb = check_int(bins, "bins", _OWNER, low=1, high=10_000)
        lo, hi = float(allv.min()), float(allv.max())
        edges = np.linspace(lo, hi if hi > lo else lo + 1.0, nb + 1)
    else:
        try:
            edges = np.asarray(bins, dtype=float).ravel()
        except (TypeError, ValueError):
            raise param_error(_OWNER, "bins", "None, an int or an increasing array of edges", bins,
                              kind=TypeError) from None
        if edges.size < 2 or not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
            raise param_error(_OWNER, "bins", "None, an int or an increasing array of at least 2 finite edges", bins)
    hD, _ = np.histogram(sD, edges)
    hP, _ = np.histogram(sP, edges)
    return hD / sD.size, hP / sP.size, edges


def audit(mechanism: Callable, D: Any, D_prime: Any, *, statistic: Callable, trials: int, epsilon: float,
          delta: float = 0.0, rng: Any = None, alpha: float = 0.05, bins: Any = None, thresholds: Any = None,
          selection: float = 0.25, max_events: int = 4, max_thresholds: int = 64, max_trials: int | None = None,
          progress: Callable[[float, str], None] | None = None) -> AuditResult:
    """Empirical lower bound ε̂ on the privacy loss of ``mechanism`` on the pair (D, D').

    .. math:: \\hat\\varepsilon = \\max\\Big(0,\\; \\max_{E,\\ \\text{both directions}}
              \\log\\frac{\\mathrm{CP}^{lo}_{\\alpha/(2K)}(P_D(E)) - \\delta}{\\mathrm{CP}^{hi}_{\\alpha/(2K)}(P_{D'}(E))}\\Big)

    over the K tested (event, direction) pairs, each event a threshold event on the statistic,
    CP the one-sided Clopper–Pearson bounds. With probability at least 1 - α every bound used holds
    at once, so ε̂ <= ε for any (ε, δ)-DP mechanism (see the module docstring). No outcome of N test
    runs can exceed the audit's detection limit (:func:`detection_limit`); when it is not above the
    declared ε the result says the audit cannot decide (``verdict``), never that the mechanism is fine.

    Parameters
    ----------
    mechanism : callable ``(X, rng) -> Release``
        Called ``trials`` times on each dataset, each time with an independent child generator of
        ``rng`` (``numpy.random.Generator.spawn``).
    D, D_prime : array (n, d) and (n', d)
        A neighbouring pair (:func:`neighbouring_pair`).
    statistic : callable ``Release -> float``
        A scalar of the release's public part (never ``release.owner``); helpers below.
    trials : int in [20, 10^7]
        Runs per dataset.
    epsilon : float in [0, inf); delta : float in [0, 1)
        The declared ε and δ (what is being audited).
    rng : numpy Generator, int or None
    alpha : float in (0, 1)
        Error probability of the lower bound (confidence 1 - α).
    bins : None, int in [1, 10^4] or array of edges
        Histogram bins for the pictures (``hist_D``, ``hist_D_prime``); None: unit bins for
        integer statistics with at most 200 values, else 40 equal bins.
    thresholds : None or array of float
        Fixed, data-independent thresholds (all trials test all 2·2·len(thresholds) event/direction
        pairs). None: chosen from the ``selection`` share of the trials.
    selection : float in (0, 1)
        Share of the trials used to choose thresholds and rank events (when ``thresholds`` is None).
    max_events : int in [1, 1000]
        Number of best-ranked (event, direction) pairs tested after selection.
    max_thresholds : int in [1, 10^4]
        At most this many candidate thresholds (distinct values, else quantiles of the selection runs).
    max_trials : int in [trials, 10^7] or None
        A bounded cost for raising the number of runs: when the detection limit of ``trials`` runs is
        below the declared ε plus :data:`HEADROOM`, the audit runs the fewest trials that reach it
        (:func:`trials_for_limit`) if they are at most ``max_trials``; otherwise it runs ``trials`` and
        its verdict says what it can and cannot see. None: never raised.
    progress : callable ``(fraction, message)`` or None
        Called after every run.

    Returns
    -------
    AuditResult
    """
    args = _audit_args(mechanism, D, D_prime, statistic, trials, epsilon, delta, rng, alpha, selection, max_events,
                       max_thresholds, max_trials, thresholds, progress)
    n_trials = _planned_trials(args)
    children = args.gen.spawn(2 * n_trials)
    total = 2 * n_trials
    sD = _collect(mechanism, args.D, children[:n_trials], statistic, progress, 0, total)
    sP = _collect(mechanism, args.D_prime, children[n_trials:], statistic, progress, n_trials, total)
    K, tested, n_selection = _select_and_test(sD, sP, args)
    events = tuple(AuditEvent(*r) for r in tested)
    best = max(events, key=lambda e: e.epsilon_lower)
    eps_hat = best.epsilon_lower
    if not eps_hat > 0:
        eps_hat, best = 0.0, None
    hD, hP, edges = _histograms(sD, sP, bins)
    return AuditResult(epsilon_lower=float(eps_hat), epsilon_declared=args.epsilon, delta=args.delta, best_event=best,
                       trials=n_trials, samples_D=sD, samples_D_prime=sP, hist_D=hD, hist_D_prime=hP,
                       bin_edges=edges, alpha=args.alpha, events_tested=K, selection_trials=n_selection, events=events,
                       detection_limit=detection_limit(n_trials - n_selection, K, alpha=args.alpha, delta=args.delta),
                       requested_trials=args.trials if n_trials != args.trials else None)


@dataclass(frozen=True)
class _AuditArgs:
    """The checked arguments of :func:`audit`."""

    D: np.ndarray
    D_prime: np.ndarray
    trials: int
    epsilon: float
    delta: float
    alpha: float
    gen: np.random.Generator
    selection: float
    max_events: int
    max_thresholds: int
    max_trials: int | None
    fixed: np.ndarray | None


def _audit_args(mechanism, D, D_prime, statistic, trials, epsilon, delta, rng, alpha, selection, max_events,
                max_thresholds, max_trials, thresholds, progress) -> _AuditArgs:
    """Every argument of :func:`audit` checked, in the order the messages are expected."""
    if not callable(mechanism):
        raise param_error(_OWNER, "mechanism", "a callable (X, rng) -> Release", mechanism, kind=TypeError)
    if not callable(statistic):
        raise param_error(_OWNER, "statistic", "a callable Release -> float", statistic, kind=TypeError)
    n_trials = check_int(trials, "trials", _OWNER, low=20, high=MAX_TRIALS)
    eps = check_float(epsilon, "epsilon", _OWNER, low=0.0)
    dlt = check_float(delta, "delta", _OWNER, low=0.0, high=1.0, high_open=True)
    a = check_float(alpha, "alpha", _OWNER, low=0.0, high=1.0, low_open=True, high_open=True)
    gen = check_rng(rng, _OWNER)
    sel = check_float(selection, "selection", _OWNER, low=0.0, high=1.0, low_open=True, high_open=True)
    k_max = check_int(max_events, "max_events", _OWNER, low=1, high=1000)
    t_max = check_int(max_thresholds, "max_thresholds", _OWNER, low=1, high=10_000)
    cap = None if max_trials is None else check_int(max_trials, "max_trials", _OWNER, low=n_trials, high=MAX_TRIALS)
    if progress is not None and not callable(progress):
        raise param_error(_OWNER, "progress", "None or a callable (fraction, message)", progress, kind=TypeError)
    fixed = None
    if thresholds is not None:
        try:
            fixed = np.unique(np.asarray(thresholds, dtype=float).ravel())
        except (TypeError, ValueError):
            raise param_error(_OWNER, "thresholds", "None or an array of floats", thresholds, kind=TypeError) from None
        if fixed.size == 0 or not np.all(np.isfinite(fixed)):
            raise param_error(_OWNER, "thresholds", "None or a non-empty array of finite floats", thresholds)
    X0 = check_points(D, "D", _OWNER, min_rows=0)
    X1 = check_points(D_prime, "D_prime", _OWNER, min_rows=0)
    if X0.shape[1] != X1.shape[1]:
        raise param_error(_OWNER, "D_prime", f"an array with {X0.shape[1]} columns like D", X1)
    if fixed is None and n_trials - _selection_runs(n_trials, sel) < 10:
        raise param_error(_OWNER, "selection", f"small enough to leave at least 10 test trials of {n_trials}",
                          selection)
    return _AuditArgs(X0, X1, n_trials, eps, dlt, a, gen, sel, k_max, t_max, cap, fixed)


def _selection_runs(trials: int, selection: float) -> int:
    """Runs per dataset that only choose the events (the rest test them)."""
    return max(1, int(round(selection * trials)))


def _planned_trials(args: _AuditArgs) -> int:
    """``trials``, or with ``max_trials`` the fewest runs whose detection limit is the declared ε plus
    :data:`HEADROOM`, when the requested ones fall short and the raise stays within ``max_trials``."""
    kw = dict(alpha=args.alpha, delta=args.delta, selection=args.selection, max_events=args.max_events,
              thresholds=args.fixed)
    target = args.epsilon + HEADROOM
    if args.max_trials is None or planned_limit(args.trials, **kw) >= target:
        return args.trials
    needed = trials_for_limit(target, **kw)
    return needed if needed is not None and args.trials < needed <= args.max_trials else args.trials


def _select_and_test(sD: np.ndarray, sP: np.ndarray, args: _AuditArgs) -> tuple[int, list, int]:
    """Choose the events on the selection runs and bound them on the test runs (or test the fixed
    thresholds on every run). Returns (K, the tested rows of :func:`_event_bounds`, selection runs)."""
    a, dlt = args.alpha, args.delta
    if args.fixed is not None:
        K = 4 * args.fixed.size  # two kinds x two directions per threshold
        return K, _event_bounds(sD, sP, args.fixed, a / (2 * K), dlt), 0
    n_sel = _selection_runs(sD.size, args.selection)
    selD, testD = sD[:n_sel], sD[n_sel:]
    selP, testP = sP[:n_sel], sP[n_sel:]
    cand = _candidate_thresholds(np.concatenate([selD, selP]), args.max_thresholds)
    # Rank on the selection runs at the level the test will use, so the ranking reflects power.
    rows = _event_bounds(selD, selP, cand, a / (2 * args.max_events), dlt)
    order = sorted(range(len(rows)), key=lambda i: (-rows[i][7], -(rows[i][5] - rows[i][6])))
    chosen = [rows[i][:3] for i in order[:args.max_events]]
    K = len(chosen)
    tested = []
    for kind, t, direction in chosen:
        for r in _event_bounds(testD, testP, np.array([t]), a / (2 * K), dlt):
            if r[0] == kind and r[2] == direction:
                tested.append(r)
    return K, tested, n_sel


# ------------------------------------------------------------------------- the detection limit
def detection_limit(test_trials: int, events: int, *, alpha: float = 0.05, delta: float = 0.0) -> float:
    """The largest ε̂ an audit with ``test_trials`` test runs per dataset and ``events`` tested (event,
    direction) pairs can report: violations above it are invisible to it.

    .. math:: \\bar\\varepsilon = \\log\\frac{\\mathrm{CP}^{lo}_\\beta(N; N) - \\delta}{\\mathrm{CP}^{hi}_\\beta(0; N)}
              = \\log\\frac{\\beta^{1/N} - \\delta}{1 - \\beta^{1/N}}, \\qquad \\beta = \\frac{\\alpha}{2K}

    The bound of an event grows with its count on one dataset and falls with its count on the other,
    so the largest is an event seen in every test run on one dataset and in none on the other,
    computed here with the audit's own :func:`clopper_pearson` (0 when even that gives no positive
    bound). With 750 test runs (1,000 trials, a quarter for selection), 4 events and α = 0.05 it is
    about 4.99.
    """
    owner = "detection_limit"
    N = check_int(test_trials, "test_trials", owner, low=1, high=MAX_TRIALS)
    K = check_int(events, "events", owner, low=1)
    a = check_float(alpha, "alpha", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    dlt = check_float(delta, "delta", owner, low=0.0, high=1.0, high_open=True)
    level = a / (2 * K)
    top = float(clopper_pearson(N, N, level, "lower")) - dlt
    bottom = float(clopper_pearson(0, N, level, "upper"))
    return math.log(top / bottom) if top > 0 and top > bottom else 0.0


def planned_limit(trials: int, *, alpha: float = 0.05, delta: float = 0.0, selection: float = 0.25,
                  max_events: int = 4, thresholds: Any = None) -> float:
    """The detection limit :func:`audit` will have with these settings, before running: its test runs
    (``trials`` minus the selection runs, or all with fixed ``thresholds``) and its events (``max_events``,
    at most; fewer tested events only raise the limit, which the result reports exactly)."""
    if thresholds is not None:
        return detection_limit(trials, 4 * np.unique(np.asarray(thresholds, dtype=float)).size, alpha=alpha,
                               delta=delta)
    return detection_limit(trials - _selection_runs(trials, selection), max_events, alpha=alpha, delta=delta)


def trials_for_limit(target: float, *, alpha: float = 0.05, delta: float = 0.0, selection: float = 0.25,
                     max_events: int = 4, thresholds: Any = None) -> int | None:
    """The fewest trials per dataset (at least 20) whose :func:`planned_limit` exceeds ``target``; None
    beyond :data:`MAX_TRIALS`. The test runs come from the closed form of :func:`detection_limit`, then the
    selection runs are added."""
    t = check_float(target, "target", "trials_for_limit", low=0.0)
    fixed = thresholds is not None
    K = 4 * np.unique(np.asarray(thresholds, dtype=float)).size if fixed else max_events
    n_test = runs_for_limit(t, K, alpha=alpha, delta=delta)
    if n_test is None:
        return None
    if fixed:
        trials = max(20, n_test)
    else:
        trials = max(20, math.ceil(n_test / (1.0 - selection)))
        while trials - _selection_runs(trials, selection) < n_test:
            trials += 1
        while trials > 20 and (trials - 1) - _selection_runs(trials - 1, selection) >= n_test:
            trials -= 1
    return trials if trials <= MAX_TRIALS else None


def runs_for_limit(target: float, events: int, *, alpha: float = 0.05, delta: float = 0.0) -> int | None:
    """The fewest test runs N whose :func:`detection_limit` with ``events`` tested events exceeds
    ``target`` (None beyond :data:`MAX_TRIALS`): :math:`\\beta^{1/N} > x = (e^{t} + \\delta)/(e^{t} + 1)`,
    i.e. :math:`N > \\log\\beta / \\log x`, checked against :func:`detection_limit` itself."""
    level = alpha / (2 * events)
    e = math.exp(min(float(target), 700.0))
    x = (e + delta) / (e + 1.0)
    if x >= 1.0:
        return None
    n = max(1, math.ceil(math.log(level) / math.log(x)))
    if n > MAX_TRIALS:
        return None
    while n <= MAX_TRIALS and detection_limit(n, events, alpha=alpha, delta=delta) <= target:
        n += 1
    while n > 1 and detection_limit(n - 1, events, alpha=alpha, delta=delta) > target:
        n -= 1
    return n if n <= MAX_TRIALS else None


# ------------------------------------------------------------------------- neighbouring pairs
def relation_of(kind: str) -> str:
    """The neighbouring relation a pair kind belongs to: add/remove -> "add_remove", move -> "replace"."""
    if not isinstance(kind, str):
        raise param_error("relation_of", "kind", "one of 'add', 'remove', 'move'", kind, kind=TypeError)
    if kind not in NEIGHBOUR_KINDS:
        raise param_error("relation_of", "kind", "one of 'add', 'remove', 'move'", kind)
    return NEIGHBOUR_KINDS[kind]


def neighbouring_pair(X: Any, kind: str = "add", point: Any = None, index: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A neighbouring pair (D, D') with D = X.

    * ``"add"``: D' = D plus ``point`` (default: a copy of row ``index``); an add/remove pair.
    * ``"remove"``: D' = D without row ``index``; an add/remove pair.
    * ``"move"``: D' = D with row ``index`` replaced by ``point`` (required); a replace pair.

    Parameters
    ----------
    X : array (n, d), n >= 1 (n >= 0 for "add" with an explicit point)
    kind : {"add", "remove", "move"}
    point : array (d,) or None, in the units of X
    index : int in [0, n-1]

    Returns
    -------
    D, D_prime : float arrays of shapes (n, d) and (n ± 1 or n, d)
    """
    owner = "neighbouring_pair"
    if not isinstance(kind, str):
        raise param_error(owner, "kind", "one of 'add', 'remove', 'move'", kind, kind=TypeError)
    if kind not in NEIGHBOUR_KINDS:
        raise param_error(owner, "kind", "one of 'add', 'remove', 'move'", kind)
    needs_row = not (kind == "add" and point is not None)
    D = check_points(X, "X", owner, min_rows=1 if needs_row else 0)
    n, d = D.shape
    p = None
    if point is not None:
        p = check_points(np.asarray(point, dtype=float).reshape(1, -1) if not isinstance(point, str) else point,
                         "point", owner, d=d, min_rows=1)
        if p.shape[0] != 1:
            raise param_error(owner, "point", f"one point of dimension {d}", point)
    elif kind == "move":
        raise param_error(owner, "point", "a point of dimension d for kind='move'", point, kind=TypeError)
    i = check_int(index, "index", owner, low=0, high=max(n - 1, 0)) if needs_row else 0
    if kind == "add":
        new = D[i:i + 1] if p is None else p
        return D.copy(), np.vstack([D, new])
    if kind == "remove":
        return D.copy(), np.delete(D, i, axis=0)
    D2 = D.copy()
    D2[i] = p[0]
    return D.copy(), D2


def from_registry(name: str, domain: Any, **settings: Any) -> Callable:
    """``(X, rng) -> bind(name, **settings)(X, domain, rng=rng)``: a registered mechanism for :func:`audit`.

    ``settings`` are :func:`~dpsynth_core.mechanisms.bind`'s keywords (``epsilon``, ``delta``,
    ``neighbours``, ``n_public``) and the mechanism's parameters.
    """
    check_choice(name, "name", "from_registry", sorted(load_all()))
    bound = bind(name, **{k: settings.pop(k) for k in SETTINGS if k != "rng" and k in settings}, params=settings)

    def mechanism(X, rng):
        return bound(X, domain, rng=rng)

    mechanism.__name__ = f"{name}_for_audit"
    return mechanism


#: The statistics :func:`statistic_named` knows.
STATISTICS = ("count in the box around the point", "synthetic size", "mean of the first coordinate")


def pair_near(X: Any, domain: Any, kind: str, point: Sequence[float], *, n: int = 300,
              rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """A neighbouring pair (D, D') around a chosen record, for a teaching audit.

    D is ``n`` rows of X drawn without replacement; D' adds ``point`` (``"add"``), removes the row of D
    nearest to it in the unit cube's l_inf metric (``"remove"``) or moves that row onto it (``"move"``),
    via :func:`neighbouring_pair`. ``point`` is in domain units.
    """
    owner = "pair_near"
    kind = check_choice(kind, "kind", owner, tuple(NEIGHBOUR_KINDS))
    n = check_int(n, "n", owner, low=2, high=100_000)
    p = np.asarray(point, dtype=float).reshape(1, -1)
    if p.shape[1] != domain.d:
        raise param_error(owner, "point", f"a point with {domain.d} coordinates", f"{p.shape[1]} coordinates")
    gen = check_rng(rng, owner)
    X = np.asarray(X, dtype=float)
    D = X[gen.choice(X.shape[0], size=min(n, X.shape[0]), replace=False)]
    nearest = int(np.argmin(np.max(np.abs(domain.to_unit(D) - domain.to_unit(p)), axis=1)))
    return neighbouring_pair(D, kind, point=None if kind == "remove" else p[0], index=nearest)


def pair_epsilon(kind: str, neighbours: str, epsilon: float) -> tuple[float, str]:
    """The ε a release guarantees for a pair of this kind, and why.

    ε for a pair of the release's relation; 2ε for a move under add/remove (a removal then an
    addition: group privacy). An add/remove pair is not covered by the replace relation (the sizes
    differ): ValueError.
    """
    if neighbours == "replace" and kind != "move":
        raise ValueError("Under 'replace' neighbours the datasets differ by moving one record: choose the pair "
                         "'move', or switch the neighbouring relation to add/remove.")
    if neighbours == "add_remove" and kind == "move":
        return 2.0 * float(epsilon), "a move is a removal then an addition: 2ε by group privacy"
    return float(epsilon), "a neighbouring pair of the release's relation"


def statistic_named(kind: str, point: Sequence[float], domain: Any, half_width: float = 1 / 16) -> Callable:
    """A statistic of :data:`STATISTICS` for :func:`audit`.

    ``"count in the box around the point"``: the number of synthetic points in the box of half-width
    ``half_width`` (unit-cube units) around ``point`` -- an event with power on a pair that differs at
    the point; ``"synthetic size"``; ``"mean of the first coordinate"``. All are post-processing of
    the release, so as private as it.
    """
    owner = "statistic_named"
    kind = check_choice(kind, "kind", owner, STATISTICS)
    if kind == "synthetic size":
        return synthetic_size()
    if kind == "mean of the first coordinate":
        return coordinate_mean(0)
    h = check_float(half_width, "half_width", owner, low=0.0, high=1.0, low_open=True)
    c = domain.to_unit(np.asarray(point, dtype=float).reshape(1, -1))[0]
    lo = domain.from_unit(np.clip(c - h, 0.0, 1.0).reshape(1, -1))[0]
    hi = domain.from_unit(np.clip(c + h, 0.0, 1.0).reshape(1, -1))[0]
    return count_in_box(lo, hi)


def tree_path_statistic(D: Any, D_prime: Any, domain: Any, probe: Any) -> Callable:
    """The strongest statistic for a partition-tree release (PMM): its noisy counts along the changed
    record's path, each weighted by its level's budget.

    The cells whose true count differs between D and D' (at every level of the probe release's tree)
    enter :func:`count_shift` with the direction of the change and the weight ε_j / Δ of their level:
    with discrete Laplace noise this is the privacy-loss random variable of the noisy count tree
    [HVZ23, Theorem 9], so its threshold events are the most powerful tests. ``probe`` is one release
    of the mechanism on D (it fixes the depth, the per-level budgets and the sensitivity; run it with a
    public size or an explicit depth so that D and D' get the same tree).
    """
    owner = "tree_path_statistic"
    params = getattr(probe, "params", {})
    if "level_epsilons" not in params or "depth" not in params:
        raise param_error(owner, "probe", "a release of a partition-tree mechanism (PMM)",
                          getattr(probe, "mechanism", type(probe).__name__))
    depth = int(params["depth"])
    weights = np.asarray(params["level_epsilons"], dtype=float)
    sens = float(params.get("sensitivity", 1.0))
    tree_d = partition.count_tree(domain.to_unit(np.asarray(D, dtype=float)), depth)
    tree_p = partition.count_tree(domain.to_unit(np.asarray(D_prime, dtype=float)), depth)
    cells, base, sign, weight = [], [], [], []
    for j in range(depth + 1):
        if weights[j] <= 0:
            continue
        for c in np.flatnonzero(tree_p[j] != tree_d[j]):
            cells.append((j, int(c)))
            base.append(float(tree_d[j][c]))
            sign.append(1 if tree_p[j][c] > tree_d[j][c] else -1)
            weight.append(weights[j] / sens)
    if not cells:
        raise param_error(owner, "D_prime", "a dataset whose tree differs from D's", "the same counts")
    return count_shift("noisy_counts", cells, base, sign, weight)


# ------------------------------------------------------------------------- a teaching audit
#: A deliberately broken mechanism for teaching: PMM run with 2ε while it claims ε (half the noise).
BROKEN_PMM = "broken_pmm"
#: Its name for people.
BROKEN_PMM_TITLE = "A broken PMM: half the noise (spends 2ε, claims ε)"
#: The most powerful statistic for a partition tree: :func:`tree_path_statistic`.
PATH_STATISTIC = "noisy counts along the record's path (most power)"


def teaching_statistics(mechanism: str) -> tuple[str, ...]:
    """The statistics :func:`teaching_audit` offers for ``mechanism``: the tree's path statistic first for
    PMM (and the broken PMM), then :data:`STATISTICS`."""
    return ((PATH_STATISTIC,) if mechanism in ("pmm", BROKEN_PMM) else ()) + STATISTICS


def teaching_audit(X: Any, domain: Any, mechanism: str, *, kind: str, point: Sequence[float], epsilon: float,
                   delta: float = 0.0, neighbours: str = "add_remove", statistic: str | None = None, rows: int = 100,
                   trials: int = 1000, max_trials: int | None = None, half_width: float = 1 / 16, rng: Any = None,
                   progress: Callable[[float, str], None] | None = None) -> AuditResult:
    """An audit in one call, as the dashboard's Audit page runs it: a pair around a chosen record, a
    registered mechanism (or :data:`BROKEN_PMM`) at the privacy settings, a statistic by name, the audit.

    D is ``rows`` rows of X and D' adds, removes or moves one record at ``point`` (:func:`pair_near`); the
    declared ε is the one the release guarantees for that pair (:func:`pair_epsilon`: 2ε for a move under
    add/remove); the broken PMM runs with twice the ε it claims. With :data:`PATH_STATISTIC` the tree has
    one level and a public size (the test with the most power), its cells read from a probe release of the
    honest PMM. ``delta`` is used when the mechanism needs one; ``max_trials`` lets the audit raise its
    runs so that its detection limit is above the declared ε (:func:`audit`). Returns the
    :class:`AuditResult`, whose :meth:`AuditResult.sentence` says the verdict and the detection limit.
    """
    owner = "teaching_audit"
    specs = load_all()
    name = check_choice(mechanism, "mechanism", owner, tuple(sorted(specs)) + (BROKEN_PMM,))
    stat_name = check_choice(statistic or teaching_statistics(name)[0], "statistic", owner, teaching_statistics(name))
    declared, _ = pair_epsilon(kind, neighbours, epsilon)
    base = "pmm" if name == BROKEN_PMM else name
    spec = specs[base]
    dlt = float(delta) if spec.needs_delta else 0.0
    D, D2 = pair_near(X, domain, kind, point, n=rows, rng=rng)
    params = {"depth": 1, "n_public": len(D)} if stat_name == PATH_STATISTIC else {}
    run_eps = 2.0 * float(epsilon) if name == BROKEN_PMM else float(epsilon)
    bound = bind(base, epsilon=run_eps, delta=dlt if spec.needs_delta else None, neighbours=neighbours,
                 params=params)
    if stat_name == PATH_STATISTIC:
        probe = bind("pmm", epsilon=epsilon, neighbours=neighbours, params=params)(D, domain, rng=0)
        stat = tree_path_statistic(D, D2, domain, probe)
    else:
        stat = statistic_named(stat_name, point, domain, half_width)
    return audit(lambda Z, g: bound(Z, domain, rng=g), D, D2, statistic=stat, trials=trials, epsilon=declared,
                 delta=dlt, rng=rng, max_trials=max_trials, progress=progress)

"""The fit: one non-negative distribution on the coarse joint grid consistent with all the noisy tables.

The interface is small so that another model can take the dense grid's place for wide tables:
``fit_dense(shape, measurements, total, ...)`` returns a model with ``.marginal(axes)`` (its table over
some columns, in counts) and ``.sample(m, rng)`` (m rows of coarse cells, one coarse bin per column).

The dense fit minimises the variance-weighted least squares

.. math:: L(p) = \\sum_t \\sum_{c} \\frac{\\big(N\\,(M_t p)_c - y_{t,c}\\big)^2}{v_{t,c}}

over the probability vectors p of the coarse joint grid, with y_t the noisy counts of table t (its axes'
marginal M_t p), v_t their noise variances and N the size. Mirror descent with the entropy
(multiplicative weights) from the uniform distribution, steps chosen by backtracking (Armijo):
:math:`p \\leftarrow p\\,e^{-\\eta \\nabla L} / Z`. Every iterate is a pairwise log-linear model
:math:`p \\propto \\exp\\sum_t \\theta_t[x_t]`, the family private-pgm fits [MSM19], and the number of
iterations is a regulariser: the study (docs/marginals.md) stops well before the noise is fitted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...defaults import MARGINALS_DENSE_CELLS
from ...grid import largest_remainder

__all__ = ["Measurement", "DenseJoint", "fit_dense", "DENSE_MAX_CELLS", "marginals_of", "broadcast_sum"]

#: Largest coarse joint grid the dense fit builds (cells; :data:`dpsynth_core.defaults.MARGINALS_DENSE_CELLS`).
#: Above it the release is refused, naming the limit: a graphical model fits wider tables without building
#: the joint (docs/marginals.md).
DENSE_MAX_CELLS = MARGINALS_DENSE_CELLS


@dataclass(frozen=True)
class Measurement:
    """One noisy table on the coarse grid: its columns (sorted), counts and noise variances (same shape)."""

    axes: tuple[int, ...]
    values: np.ndarray
    variance: np.ndarray


def marginals_of(p: np.ndarray, axes_list: list[tuple[int, ...]]) -> list[np.ndarray]:
    """The marginal tables of ``p`` over each (sorted) tuple of one or two axes.

    Shares work: the partial sums over the leading axes are computed once (s_i sums p over axes < i), and
    a table over (i, j) reduces s_i, which has N / (C_0 ... C_{i-1}) entries."""
    shape = p.shape
    d = len(shape)
    lead = [p]
    for i in range(1, d):
        lead.append(lead[-1].reshape(shape[i - 1], -1).sum(axis=0).reshape(shape[i:]))
    out = []
    for axes in axes_list:
        s = lead[axes[0]]
        if len(axes) == 1:
            out.append(s.reshape(shape[axes[0]], -1).sum(axis=1))
            continue
        i, j = axes
        mid = math.prod(shape[i + 1:j])
        rest = math.prod(shape[j + 1:])
        out.append(s.reshape(shape[i], mid, shape[j], rest).sum(axis=(1, 3)))
    return out


def broadcast_sum(shape: tuple[int, ...], tables: list[tuple[tuple[int, ...], np.ndarray]]) -> np.ndarray:
    """g(x) = Σ_t r_t[x_axes(t)] on the full grid, built from the last axis backwards (each table is added
    to the smallest array holding its axes, then broadcast once)."""
    d = len(shape)
    by_first: list[list] = [[] for _ in range(d)]
    for axes, r in tables:
        by_first[axes[0]].append((axes, r))
    g = np.zeros(shape[d - 1:])
    for i in range(d - 1, -1, -1):
        if i < d - 1:  # g so far holds the tables of axes > i: broadcast it along axis i
            g = np.broadcast_to(g[None], shape[i:]).copy()
        sub = shape[i:]
        for axes, r in by_first[i]:
            view = [1] * len(sub)
            for a, size in zip(axes, r.shape, strict=True):
                view[a - i] = size
            g += r.reshape(view)
    return g


@dataclass
class DenseJoint:
    """A distribution on the coarse joint grid (``p``, probabilities) and the size it stands for."""

    p: np.ndarray
    total: float
    iterations: int
    loss: float

    @property
    def shape(self) -> tuple[int, ...]:
        return self.p.shape

    def marginal(self, axes: tuple[int, ...]) -> np.ndarray:
        """The model's table over ``axes`` (sorted), in counts of ``total`` records."""
        keep = tuple(sorted(axes))
        other = tuple(a for a in range(self.p.ndim) if a not in keep)
        return self.p.sum(axis=other) * self.total

    def sample(self, m: int, rng: np.random.Generator) -> np.ndarray:
        """``m`` rows of coarse cells (m, d): each cell's count by largest remainder of m p (every count
        within 1 of its share), in random order."""
        counts = largest_remainder(self.p.ravel(), int(m))
        cells = np.repeat(np.arange(self.p.size, dtype=np.int64), counts)
        cells = cells[rng.permutation(cells.size)]
        return np.stack(np.unravel_index(cells, self.p.shape), axis=1).astype(np.int64)


def _loss_grad(p: np.ndarray, meas: list[Measurement], total: float) -> tuple[float, np.ndarray]:
    margs = marginals_of(p, [m.axes for m in meas])
    loss = 0.0
    parts = []
    for m, mu in zip(meas, margs, strict=True):
        r = (total * mu - m.values) / m.variance
        loss += float(np.sum(r * (total * mu - m.values)))
        parts.append((m.axes, 2.0 * total * r))
    return loss, broadcast_sum(p.shape, parts)


def fit_dense(shape: tuple[int, ...], measurements: list[Measurement], total: float, *, iterations: int,
              tol: float = 1e-7) -> DenseJoint:
    """Mirror descent from the uniform distribution on the grid ``shape`` (module docstring): at most
    ``iterations`` accepted steps, stopped earlier when a step lowers the loss by less than ``tol`` of it.

    Each step starts from twice the previous step size and halves it until the Armijo condition
    L(q) <= L(p) - ⟨∇L(p), p - q⟩ / 2 holds (at most 60 halvings)."""
    p = np.full(shape, 1.0 / math.prod(shape))
    logp = np.log(p)
    loss, g = _loss_grad(p, measurements, total)
    eta = 1.0 / max(float(np.abs(g).max()), 1e-300)
    done = 0
    for step in range(1, int(iterations) + 1):
        done = step
        for _ in range(60):
            lq = logp - eta * g
            lq -= lq.max()
            q = np.exp(lq)
            q /= q.sum()
            new, gq = _loss_grad(q, measurements, total)
            if new <= loss - 0.5 * float(np.sum(g * (p - q))):
                break
            eta *= 0.5
        else:  # no step lowers the loss: p is stationary to working precision
            break
        gain = loss - new
        p, logp, loss, g = q, np.log(np.maximum(q, 1e-300)), new, gq
        eta *= 2.0
        if gain <= tol * max(loss, 1e-300):
            break
    return DenseJoint(p=p, total=float(total), iterations=done, loss=loss)

"""Sliced W1: an average of one-dimensional W1 over random directions (a preview, not W1).

.. math:: SW_1 = \\frac{1}{L} \\sum_{l=1}^{L} W_1(\\theta_l^\\top \\mu, \\theta_l^\\top \\nu)

Each slice is a lower bound of the l2 W1 (projection on a unit vector is 1-Lipschitz), so the
average is too; POT computes it [FCG+21].
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..validation import check_rng
from ._common import W1Result

__all__ = ["sliced_w1", "solve"]


def sliced_w1(X: np.ndarray, Y: np.ndarray, a: np.ndarray, b: np.ndarray, *, n_projections: int = 256,
              rng: Any = None) -> float:
    """Sliced W1 (POT's ``sliced_wasserstein_distance`` with p=1) over random unit directions."""
    import ot

    gen = check_rng(rng, "sliced_w1")
    d = X.shape[1]
    theta = gen.standard_normal((d, n_projections))
    theta /= np.linalg.norm(theta, axis=0, keepdims=True)
    return float(ot.sliced_wasserstein_distance(X, Y, a, b, n_projections=n_projections, p=1,
                                                projections=theta))


def solve(X: np.ndarray, Y: np.ndarray, a: np.ndarray, b: np.ndarray, metric: str, owner: str, *,
          n_projections: int = 256, rng: Any = None) -> W1Result:
    """``wasserstein1(method="sliced")``: never exact; ``lower`` is a proven lower bound of W1."""
    t0 = time.perf_counter()
    d = X.shape[1]
    v = sliced_w1(X, Y, a, b, n_projections=n_projections, rng=rng)
    lower = v / math.sqrt(d) if metric == "linf" else v
    return W1Result(v, lower, math.inf, "sliced", False, False, 1, time.perf_counter() - t0,
                    {"n_projections": n_projections,
                     "note": "approximation; lower bound of W1 (l2, l1), of sqrt(d) W1 (linf)"})

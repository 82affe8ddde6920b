"""Multi-resolution marginal tables (``marginals``): a mechanism in the family of [DLS+24] for tables of a few
to a few dozen columns, numeric, integer and categorical.

One record shows up in every marginal table, so a table of d columns is measured d + C(d, 2) times, in
cells of many records each, where a full-dimensional histogram (PMM, PSMM) has cells of about one record
at n ≈ 500 and d = 5. The mechanism:

1. **Tables** (:mod:`.tables`): every column's 1-way table on a fine grid and every pair's 2-way table on a
   coarse one (coarse bins are unions of fine bins); categorical columns have one bin per declared
   category, declared integer columns with few values one bin per whole value. One pass over the rows
   counts them all (integer counts: Dask partitions add up exactly).
2. **Noise** (:mod:`.noise`): discrete Laplace without δ (pure ε-DP, basic composition); with δ the family of
   smaller variance, Gaussian noise composed exactly (ρ-zCDP = √(2ρ)-GDP, [DRS22]). Add/remove or replace
   (sensitivity doubled).
3. **Fit** (:mod:`.fit`): one distribution on the coarse joint grid minimising the variance-weighted squared
   distance to all the noisy tables (mirror descent from uniform), behind a small interface (``marginal``,
   ``sample``) so that a graphical model can replace the dense grid for wide tables.
4. **Sampling** (:mod:`.sampling`): N rows (public n, or the size read off the tables' noisy totals), coarse
   cells from the fit, fine bins from the noisy fine 1-way counts, values uniform in their fine bin (whole
   values for integer columns).
5. **Certificate** (:mod:`.certificate`): with probability at least 1 - β over the noise, the largest W1 over
   the 2-way marginals between the data and the release is at most ``rel.bound``.

docs/marginals.md has the details, the defaults study and the deviations from [DLS+24].

References: [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private
data release for sparse Lipschitz functions. AISTATS 2024. [MSM19] R. McKenna, D. Sheldon, G. Miklau.
Graphical-model based estimation and inference for differential privacy. ICML 2019. [DRS22] J. Dong,
A. Roth, W. J. Su. Gaussian Differential Privacy. JRSS B 2022. See docs/references.md.
"""

from __future__ import annotations

from .certificate import Certificate, certify
from .fit import DENSE_MAX_CELLS, DenseJoint, Measurement, fit_dense
from .mechanism import MarginalsConfig, MarginalsOwner, MarginalsTrace, marginals
from .noise import FAMILIES, NoisePlan, plan_noise
from .tables import Column, Layout, marginal_counts, plan_layout

__all__ = ["marginals", "MarginalsConfig", "MarginalsTrace", "MarginalsOwner", "Layout", "Column", "plan_layout",
           "marginal_counts", "NoisePlan", "plan_noise", "FAMILIES", "Measurement", "DenseJoint", "fit_dense",
           "DENSE_MAX_CELLS", "Certificate", "certify"]

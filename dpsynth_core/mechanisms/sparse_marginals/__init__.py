"""Certified private release for sparse Lipschitz queries (Donhauser et al., AISTATS 2024 [DLS+24]).

The utility loss of a synthetic measure μ against the data's empirical measure μ_D is the largest
Wasserstein-1 distance over all s-dimensional marginals ([DLS+24, Eq. (1)]; l_inf metric on
``[0,1]^s``, probability measures, unit-cube coordinates):

.. math:: \\mathcal U(\\mu_D, \\mu) = \\max_{S \\subset [d],\\ |S| = s} W_1(P^S_\\# \\mu_D, P^S_\\# \\mu)

Algorithm 1 of the paper, as implemented by :func:`sparse_marginals`:

1. **Query operator** T: for every subset S of s coordinates (K = C(d, s) blocks) the normalised
   histogram of the S-marginal on the grid :math:`T_{k,s}` (``k^s`` cells of side 1/k, centres
   ``(2i-1)/2k``), cells ordered along the boustrophedon (snake) path, whose consecutive centres are
   l_inf neighbours at distance 1/k (Section 3, Appendix C.1). Under replace neighbours one record
   moves two entries of each block by 1/n: :math:`\\Delta_T = 2K/n` (Section 3, Lemma 4's proof).
2. **Noise**: per block :math:`v^S_{DP} = v^S + [\\Phi \\tilde\\eta^S]_{1:k^s}` with Φ the rescaled
   transposed Haar matrix of Lemma 3 (``||Φ^{-1}||_1 = 1``, padding to a power of two) and
   :math:`\\tilde\\eta \\sim \\mathrm{Lap}(\\|\\Phi^{-1}\\|_1\\Delta_T/\\varepsilon) = \\mathrm{Lap}(2K/(n\\varepsilon))`
   i.i.d. (Eq. (7), Lemma 2): ε-DP. The noise comes from :func:`dpsynth_core.haar.superregular_noise`.
3. **Projection** (Eq. (12) restricted to measures on public points, Section 5.1, Eq. (16)):
   minimise the proxy loss of Eq. (10)

   .. math:: \\mathcal L_T(v, u) = \\max_S \\frac1k \\sum_{l=1}^{k^s} \\Big|\\sum_{i \\le l} v^S_i - u^S_i\\Big|

   over :math:`\\mu = \\sum_j \\alpha_j \\delta_{z_j}`, α in the simplex, as a sparse linear program
   with cumulative-sum variables per block (:func:`step3_lp`).
4. **Certificate** (Eq. (4), Lemma 1): with probability at least 1 - δ over the noise, for every
   probability measure μ,

   .. math:: \\mathcal U(\\mu_D, \\mu) \\le \\underbrace{\\tfrac{1}{2k}}_{\\text{discretisation}}
             + \\underbrace{q_{1-\\delta}(\\mathcal G(0, \\eta))}_{\\text{privatisation}}
             + \\underbrace{\\mathcal G(v_{DP}, T\\mu) + \\mathcal U(T^{-1}T\\mu, \\mu)}_{\\text{projection}}

   with G = L_T (Eq. (10)) or the tighter :math:`\\mathcal U_T` of Eq. (17) (:func:`proxy_ut`). The
   quantile is estimated by Monte Carlo over M fresh noise draws (no data involved), so the whole
   certificate is differentially private (post-processing of v_DP and public inputs). The estimate is
   the ⌈(1-δ)(M+1)⌉-th smallest draw (:func:`mc_order`): by exchangeability of the noise actually added
   with the M fresh draws, the release's privatisation term exceeds it with probability at most δ,
   over the noise and the draws together, so the certificate holds with probability at least 1-δ
   exactly (the ⌈(1-δ)M⌉-th draw would be exceeded with probability slightly above δ).

5. **Consistent certificate** (the default released bound; not in the paper, an instance of its
   Lemma 1). Lemma 1 needs only a proxy G that is translation invariant, satisfies the triangle
   inequality and dominates U on differences of query vectors, :math:`x = \\mathbb T\\mu_D - \\mathbb T\\mu`.
   Every such x lies in :math:`\\ker A` (:func:`consistency_constraints`: zero block totals; the
   s-marginals of one signed measure share their (s-1)-marginals). For *any* fixed matrix M the map
   :math:`\\Pi = I - MA` is the identity on :math:`\\ker A`, so :math:`\\mathcal G_\\Pi(v, u) = \\mathcal G(\\Pi(v - u))`
   is again a valid proxy: translation invariant, a seminorm (triangle inequality), and
   :math:`\\mathcal G_\\Pi(\\mathbb T\\mu_D, \\mathbb T\\mu) = \\mathcal G(\\mathbb T\\mu_D, \\mathbb T\\mu)`. Lemma 1 then gives, w.p.
   :math:`\\ge 1-\\delta`, :math:`\\mathcal U(\\mu_D,\\mu) \\le 1/2k + q_{1-\\delta}(\\mathcal G(\\Pi\\eta)) + \\mathcal G(\\Pi v_{DP} - \\mathbb T\\mu)
   + \\mathcal U(\\mathbb T^{-1}\\mathbb T\\mu, \\mu)` uniformly in μ (:math:`\\Pi\\mathbb T\\mu = \\mathbb T\\mu` up to the block
   totals, which the affine version :math:`v_{cons} = c_0 + \\Pi(v_{DP} - c_0)`, c0 the uniform tables, keeps).
   Π is fixed before the data are seen (it depends on d, s, k and the noise law only), so the bound is
   post-processing of :math:`v_{DP}`; the quantile is a Monte Carlo estimate over fresh draws of
   :math:`\\Pi\\eta`. M is the generalised-least-squares choice (:func:`consistency_map`), which removes the
   components of the noise that no dataset can produce (inconsistent lower marginals; with the paper's
   noise also the block totals). With G = U_T, per block
   :math:`W_1(P^S\\mu_D, P^S\\mu) \\le \\|P^S\\mu_D - T^{-1}v^S\\|_{KR} + \\|T^{-1}(\\Pi\\eta)^S\\|_{KR}
   + \\|T^{-1}v^S_{cons} - P^S\\mu\\|_{KR}` (norm of zero-mass signed measures, the origin absorbing any
   mass imbalance as in Eq. (17)); the first term is at most 1/2k, the second is the block's
   :math:`\\mathcal U_T(0, \\Pi\\eta)`, and the last is computed exactly (:func:`kr_grid_points`): for public
   points snapped to :math:`T_{k,d}` it *equals* the block's :math:`\\mathcal U_T(\\Pi v_{DP}, \\mathbb T\\mu)`
   (both measures live on the grid centres), for unsnapped points it is at most
   :math:`\\mathcal U_T(\\Pi v_{DP}, \\mathbb T\\mu) + \\mathcal U(\\mathbb T^{-1}\\mathbb T\\mu, \\mu)` by the triangle inequality.
   With one quantile for the maximum over blocks, the maximum over blocks of the per-block sum equals
   the sum of the per-term maxima (only the projection term varies by block). The paper's certificates
   (Π = I) stay in the trace. The effect of the projection on the U_T quantile, the projection term,
   the certificate / loss ratio and the exceedance frequency (n = 2000, d = 4, s = 2, k = 8, ε = 1, two
   datasets) is measured in ``benchmarks/results/sparse_marginals.json`` ("coverage_tightness").

**Categorical columns** (a mixed domain, docs/mixed-data.md): the marginal over a set S of columns lives
on the product of its numeric grid cells (k per numeric axis) and the declared categories of its
categorical columns (one cell each, nothing discretised). This is the setting of [DLS+24, Appendix C]
(one finite metric space per block, blocks of different sizes, each with its own Haar matrix), with the
mixed metric :math:`\\max(\\|\\cdot\\|_\\infty \\text{ on numeric},\\ w_j[\\text{category differs}])`;
:mod:`.mixed` holds the blocks' geometry (paths, step lengths, noise, U_T), and every step above takes it.
The sensitivity is unchanged (one record moves two cells of each block, whatever it changes), the
discretisation term stays 1/2k (a categorical axis adds 0), U_T is the KR norm under the mixed metric,
and Step 3 is the L_T LP with the path's step lengths (the U_T Step 3 is refused on mixed domains).

Only the replace relation is supported: the histograms are normalised by n, which must be public
(the paper's setting). Under add/remove the mechanism refuses to run.

The private rows are read once, through the integer counts of all the discretised s-marginals
(:func:`marginal_counts`, a per-record statistic summed by :meth:`dpsynth_core.rows.Rows.sum`); the
true query vector is those counts divided by the public n, correctly rounded per cell. Everything
else (noise, Step 3, certificate, the owner-side trace) uses only the counts, public inputs and fresh
noise, so X may be a Dask array or DataFrame that does not fit in memory, and with the same rng the
release is bit for bit the one for the same rows in memory, in any number of partitions.

Modules
    :mod:`.query` Steps 1–2 (the query operator, the Haar-transformed noise, the default grid);
    :mod:`.proxies` the proxy losses L_T and U_T (exact U_T within a solve budget);
    :mod:`.projection` Step 3 (the public candidates and the projection LPs, SciPy HiGHS);
    :mod:`.consistency` the consistency projection Π (item 5);
    :mod:`.mixed` the blocks of a mixed domain (categorical columns);
    :mod:`.certificate` Step 4 (the Monte Carlo quantile and the certificate's terms);
    :mod:`.mechanism` :func:`sparse_marginals` itself, calling those steps.
The public names of these modules are re-exported here (``from dpsynth_core.mechanisms.sparse_marginals
import step3_lp``); the release's typed results are :class:`SparseMarginalsTrace` and
:class:`SparseMarginalsOwner`, its parameters :class:`SparseMarginalsConfig`.
"""

from ...datasets import shift_scenario  # the test-data generator of the shift figures; it lives in datasets
from ...transport.marginals import marginal_subsets, sparse_utility_loss
from .certificate import CERTIFICATES, CertificateTerms, kr_grid_points, mc_order
from .consistency import (
    CONSISTENCY,
    consistency_constraints,
    consistency_map,
    consistent_part,
    mixed_consistency_map,
)
from .mechanism import SparseMarginalsConfig, SparseMarginalsOwner, SparseMarginalsTrace, sparse_marginals
from .mixed import DENSE_MIXED_MAX, MixedBlocks, block_scales, mixed_marginal_counts
from .projection import (
    PUBLIC_GENERATORS,
    TIE_BREAK,
    discretise_support,
    step3_dense_lp,
    step3_lp,
    step3_ut_lp,
)
from .proxies import proxy_lt, proxy_ut, proxy_ut_lp
from .query import (
    MAX_CELLS_PER_BLOCK,
    MAX_CELLS_TOTAL,
    NOISES,
    default_k,
    haar_block_noise,
    marginal_counts,
    marginal_vector,
    noise_scale,
)

__all__ = [
    "sparse_marginals",
    "SparseMarginalsConfig",
    "SparseMarginalsTrace",
    "SparseMarginalsOwner",
    "CertificateTerms",
    "sparse_utility_loss",
    "marginal_subsets",
    "marginal_vector",
    "marginal_counts",
    "noise_scale",
    "haar_block_noise",
    "proxy_lt",
    "proxy_ut",
    "proxy_ut_lp",
    "step3_lp",
    "step3_dense_lp",
    "step3_ut_lp",
    "NOISES",
    "CONSISTENCY",
    "consistency_constraints",
    "consistency_map",
    "consistent_part",
    "mixed_consistency_map",
    "MixedBlocks",
    "block_scales",
    "mixed_marginal_counts",
    "DENSE_MIXED_MAX",
    "kr_grid_points",
    "mc_order",
    "default_k",
    "discretise_support",
    "shift_scenario",
    "PUBLIC_GENERATORS",
    "CERTIFICATES",
    "TIE_BREAK",
    "MAX_CELLS_PER_BLOCK",
    "MAX_CELLS_TOTAL",
]

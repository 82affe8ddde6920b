"""The mechanism: :func:`sparse_marginals` (registration, parameters, the release) calling the steps of
the other modules of this package (see the package docstring for the mathematics).
"""

from __future__ import annotations

import math

import numpy as np

from ... import limits
from ...grid import cell_of, largest_remainder
from ...haar import levels_for
from ...privacy import Ledger
from ...theory import Theory, marginal_rate
from ...transport.marginals import marginal_subsets
from ...validation import check_bool, check_choice, check_float, check_int, param_error
from ..base import ParamSpec, Release, prepare, register
from .certificate import (
    CERTIFICATES,
    DIRECT_MAX_NODES,
    certificate_terms,
    default_k_within_budget,
    direct_projection,
    mc_order,
    quantile_high,
    support_discretisation,
    ut_quantile,
    ut_solve_plan,
)
from .consistency import CONSISTENCY, consistency_map, consistent_part
from .projection import PUBLIC_GENERATORS, TIE_BREAK, discretise_support, public_points, step3_lp, step3_ut_lp
from .proxies import SolveBudget, proxy_lt, solve_cost, ut_block_max, ut_exact
from .query import (
    MAX_CELLS_PER_BLOCK,
    MAX_CELLS_TOTAL,
    NOISES,
    default_k,
    haar_block_noise,
    marginal_bins,
    marginal_counts,
    noise_scale,
    path_rank,
)

__all__ = ["sparse_marginals"]

_OWNER = "sparse_marginals"


@register(dict(
    theory=Theory(proven=False, rate=marginal_rate),
    name="sparse_marginals",
    title="Certified sparse-marginal release (Donhauser et al.)",
    paper=("Donhauser, Lokna, Sanyal, Boedihardjo, Hönig, Yang, Certified private data release for sparse Lipschitz "
           "functions (AISTATS 2024) [DLS+24]"),
    algorithm="[DLS+24] Algorithm 1 with public-data Step 3 (Section 5.1); certificate Eq. (4) with U_T (Eq. 17) or L_T (Eq. 10)",
    dp="pure",
    neighbours=("replace",),
    default_neighbours="replace",
    params=(
        ParamSpec("s", "int", 2, "Marginal order: the utility loss is the largest W1 over all s-dimensional "
                  "marginals (Eq. 1).", low=1, high=6),
        ParamSpec("k", "int", None, "Cells per axis of each marginal grid (k^s cells per block); default: the k "
                  "minimising the expected-loss bound of Eq. (15) for (n, ε, d, s), no data used.", low=1,
                  high=4096),
        ParamSpec("public", "choice", "uniform", "Public candidate points the synthetic measure lives on "
                  "(Section 5.1): a data-independent generator here; an array through the API.",
                  choices=PUBLIC_GENERATORS),
        ParamSpec("public_size", "int", 4000, "Number of generated public candidates (the paper uses 4000).",
                  low=1, high=200_000, log=True),
        ParamSpec("snap_public", "bool", True, "Move public points to their cell centres in T_k,d (Section 5.1: "
                  "D_pub ⊂ T_k), so the last projection term of Eq. (4) is zero."),
        ParamSpec("certificate", "choice", "U_T", "Proxy loss in the released certificate: U_T (Eq. 17, tighter) "
                  "or L_T (Eq. 10).", choices=CERTIFICATES),
        ParamSpec("delta_cert", "float", 0.1, "The certificate holds with probability at least 1 - delta_cert "
                  "over the noise (Lemma 1).", low=0.001, high=0.5, log=True),
        ParamSpec("step3", "choice", "L_T", "Proxy minimised by the Step 3 LP: L_T (the paper) or U_T "
                  "(Algorithm 1 with G = U_T, an LP over public-point measures; not in the paper).",
                  choices=CERTIFICATES),
        ParamSpec("noise", "choice", "exact_total", "exact_total: under replace the block totals are public and get "
                  "no noise, the other Haar coefficients slightly less (same ε; docs/sparse-marginals.md, 'Step 2: noise'); paper: "
                  "Laplace(2K/(nε)) on every Haar coefficient (Lemma 2).",
                  choices=NOISES),
        ParamSpec("consistency", "choice", "certificate", "certificate: the released bound uses the proxy composed "
                  "with the consistency projection Π of the noisy marginals (Lemma 1 with G∘Π; removes the noise "
                  "components that no dataset can have, valid by the same proof); both: Step 3 also fits Π v_DP; "
                  "none: the paper's Eq. (4) as printed.", choices=CONSISTENCY),
        ParamSpec("mc_draws", "int", 200, "Monte Carlo noise draws for the privatisation quantile (no data used; "
                  "the paper uses 200).", low=20, high=100_000, log=True, advanced=True),
        ParamSpec("n_synthetic", "int", None, "Synthetic points (largest-remainder rounding of the measure); "
                  "default n (public under replace).", low=1, high=10_000_000, advanced=True),
    ),
    summary="All s-way marginals on k^s grids with Haar-transformed Laplace noise, projected onto measures over "
            "public points by a sparse LP, released with a private high-probability bound on the utility loss.",
))
def sparse_marginals(X, domain, *, epsilon, s=2, k=None, public="uniform", public_size=4000, snap_public=True,
                     certificate="U_T", delta_cert=0.1, mc_draws=200, step3="L_T", noise="exact_total",
                     consistency="certificate", n_synthetic=None, neighbours="replace", rng=None) -> Release:
    """Certified DP release for s-sparse Lipschitz queries [DLS+24, Algorithm 1, Sections 3 and 5].

    .. math:: \\mathcal B(\\mu, v_{DP}) = \\frac{1}{2k} + q_{1-\\delta}\\big(\\mathcal G(0,\\eta)\\big)
              + \\mathcal G(v_{DP}, T\\mu) + \\mathcal U(T^{-1}T\\mu, \\mu) \\ \\ge\\ \\mathcal U(\\mu_D, \\mu)
              \\ \\text{w.p.} \\ge 1 - \\delta

    Steps (package docstring): noisy marginals :math:`v_{DP} = T\\mu_D + [\\Phi\\tilde\\eta]` with
    :math:`\\tilde\\eta \\sim \\mathrm{Lap}(2K/(n\\varepsilon))` (Eq. (7), Lemma 2), Step 3 as the sparse LP of
    Section 5.1 (:func:`step3_lp`), rounding of the optimal measure to ``n_synthetic`` points (largest
    remainder), and the certificate of Eq. (4) evaluated *on the released points* (Lemma 1 holds
    uniformly over μ, so the bound applies to the rounded measure; the LP measure's certificate is in
    the trace).

    Parameters
    ----------
    X : array (n, d), DataFrame, Dask array (n, d) or Dask DataFrame
        Private data in domain units (clamped into the domain). Read only through the marginal
        counts (:func:`marginal_counts`), so a Dask collection is never materialised.
    domain : Domain (public bounds)
    epsilon : float in (0, inf)
    s : int in [1, d], default 2
        Sparsity: the utility loss is over all s-dimensional marginals (K = C(d, s) blocks).
    k : int in [1, 4096] or None
        Cells per axis of every marginal grid, with ``k^s <= 2^16`` and ``K k^s <= 2^21``.
        ``None``: :func:`default_k` (data-independent).
    public : "uniform" (default), "grid", None (= "uniform") or array (n_pub, d) in domain units
        Public candidates (Section 5.1). "uniform": ``public_size`` i.i.d. uniform points of
        the domain, drawn from ``rng`` (no data used). "grid": the centres of :math:`T_{k,d}` (all of them
        when ``k^d <= public_size`` — then Step 3 is the exact Eq. (12) — else a uniform subset).
    public_size : int in [1, 200000], default 4000 (the paper's n_a)
    snap_public : bool, default True
        Replace public points by their cell centres in :math:`T_{k,d}` (and merge duplicates), as in
        Section 5.1 (:math:`D_{pub} \\subset T_k`): the support term :math:`\\mathcal U(T^{-1}T\\mu, \\mu)` is 0.
        ``False`` keeps the points; the term is then computed exactly and added to the certificate.
    certificate : {"U_T", "L_T"}, default "U_T"
        Proxy loss G of the released certificate (Eq. (17) or Eq. (10)); Step 3 always minimises L_T
        (Section 5.4: optimising U_T over measures is not tractable).
    delta_cert : float in [0.001, 0.5], default 0.1
    mc_draws : int in [20, 100000], default 200
        Monte Carlo draws of η for the quantile: the ⌈(1-δ)(M+1)⌉-th smallest draw is used, which a
        fresh draw exceeds with probability at most δ (:func:`mc_order`); refused when M < (1-δ)/δ.
    step3 : {"L_T", "U_T"}, default "L_T"
        Proxy minimised in Step 3: L_T (the paper, Eq. (12)/(16), :func:`step3_lp`) or U_T
        (Algorithm 1 with G = U_T, tractable over public points: :func:`step3_ut_lp`; not in the paper).
    noise : {"exact_total", "paper"}, default "exact_total"
        "paper": Laplace(2K/(nε)) on every Haar coefficient (Lemma 2). "exact_total": under replace the
        total mass of each block is public (it is 1), its Haar coefficient gets no noise and the others
        Laplace(2K/(nε)·L/(L+1)) (:func:`noise_scale`); same ε, less noise (docs/deviations.md §9, "Sparse marginals": under
        replace the block totals are exact; :func:`dpsynth_core.haar.privatize_counts` does the same). Its effect
        on the certificate's privatisation quantiles (n = 2000, d = 4, k = 8) is measured in
        benchmarks/results/sparse_marginals.json ("variants", noise=paper against the default).
    consistency : {"certificate", "both", "none"}, default "certificate"
        "certificate": the released bound is Eq. (4) with the proxy :math:`\\mathcal G\\circ\\Pi`, Π the
        consistency projection of the noisy marginals (:func:`consistency_map`, package docstring); for
        ``snap_public=False`` its projection term is the exact KR distance to the released points.
        "both": Step 3 also fits :math:`\\Pi v_{DP}` instead of :math:`v_{DP}` (post-processing; lowers the
        loss). "none": the paper's Eq. (4) as printed. The paper's certificates are always in the trace
        (keys "U_T" and "L_T"), the consistent ones under "U_T_consistent" and "L_T_consistent".
    n_synthetic : int in [1, 10^7] or None (default n)
    neighbours : "replace" only (n is public; add/remove is refused)
    rng : numpy Generator, int or None

    Returns
    -------
    Release
        ``bound`` is the certificate for the released synthetic data (unit cube, l_inf, Eq. (1));
        ``trace`` holds the noisy and projected marginals (K, k^s) in row-major cell order, the
        certificate terms for U_T and L_T, the Monte Carlo samples, the LP summary and the Section 5.3
        comparison; ``trace["owner"]`` the true marginals and the realised proxy losses of the noise.

    References
    ----------
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data release for sparse Lipschitz functions. AISTATS 2024.
    .. [HH18] Q. Huangfu, J. A. J. Hall. Parallelizing the dual revised simplex method. Math. Prog. Comp. 10(1), 2018.
    See docs/references.md for the full entries.
    """
    owner = _OWNER
    p = prepare(X, domain, owner=owner, epsilon=epsilon, neighbours=neighbours, rng=rng, supported=("replace",))
    d = domain.d
    ss = check_int(s, "s", owner, low=1, high=d)
    K = math.comb(d, ss)
    M_draws = check_int(mc_draws, "mc_draws", owner, low=20, high=100_000)
    dlt = check_float(delta_cert, "delta_cert", owner, low=0.001, high=0.5)
    mc_order(M_draws, dlt, owner)  # refuses before any work when mc_draws is too small for delta_cert
    lim = limits.current()
    # Resource limits (dpsynth_core.limits), from public inputs only, before anything is allocated: the
    # query vector (K k^s entries) and the Monte Carlo noise of the certificate (mc_draws K k^s entries).
    limits.check_planned(M_draws * K, "max_cells", owner=owner, param="mc_draws", what="Monte Carlo entries",
                         fix="pass fewer mc_draws or a smaller s",
                         got=f"{M_draws} draws x C({d}, {ss}) = {K} blocks = {M_draws * K} entries at k = 1")
    psize_req = check_int(public_size, "public_size", owner, low=1, high=200_000)
    if k is None:
        cells_cap = min(MAX_CELLS_TOTAL, lim.max_cells // M_draws) // K
        k_cap = max(1, min(int(math.floor(4096 ** (1.0 / ss) + 1e-9)), int(math.floor(cells_cap ** (1.0 / ss) + 1e-9))))
        while k_cap > 1 and (k_cap**ss > cells_cap or K * (min(psize_req, k_cap**d) + 7 * k_cap**ss)
                             > lim.max_lp_nonzeros):
            k_cap -= 1
        kk = default_k(p.n, p.epsilon, d, ss, k_max=k_cap)
        k_rule = "default_k: minimiser of 1/2k + 2 E L_T(0, eta) (Eq. 15 with Eq. 30), data-independent"
        if k_cap < int(math.floor(4096 ** (1.0 / ss) + 1e-9)):
            k_rule += f"; searched up to k = {k_cap} (dpsynth_core.limits max_cells)"
    else:
        kk = check_int(k, "k", owner, low=1, high=4096)
        k_rule = "given"
    m = kk**ss
    if m > MAX_CELLS_PER_BLOCK:
        raise param_error(owner, "k", f"an int with k^s <= {MAX_CELLS_PER_BLOCK} (s={ss})", k)
    if K * m > MAX_CELLS_TOTAL:
        raise param_error(owner, "k", f"an int with C(d, s) k^s <= {MAX_CELLS_TOTAL} (d={d}, s={ss}, "
                          f"C(d, s)={K})", kk)
    limits.check_planned(M_draws * K * m, "max_cells", owner=owner, param="k", what="Monte Carlo entries",
                         fix="pass a smaller k or fewer mc_draws",
                         got=f"{M_draws} draws x {K} blocks x {kk}^{ss} cells = {M_draws * K * m} entries")
    psize = check_int(public_size, "public_size", owner, low=1, high=200_000)
    snap = check_bool(snap_public, "snap_public", owner)
    cert = check_choice(certificate, "certificate", owner, CERTIFICATES)
    st3 = check_choice(step3, "step3", owner, CERTIFICATES)
    noise_kind = check_choice(noise, "noise", owner, NOISES)
    exact_total = noise_kind == "exact_total"
    cons = check_choice(consistency, "consistency", owner, CONSISTENCY)
    need_ut = cert == "U_T" or st3 == "U_T"
    nut_quantiles = (1 + (cons != "none")) if need_ut else 0
    # Monte Carlo draws of the certificate and the default grid's planning draws: fresh noise from child
    # streams of rng, independent of the release's noise and of each other (no data involved).
    mc_gen, plan_gen = p.rng.spawn(2)
    if k is None and nut_quantiles:
        # the default grid must fit the exact-solve budget: the largest k <= the default whose estimated
        # plan (from independent planning draws, so the certificate's draws stay unselected) is at most
        # half the limit; the certificate's own plan is checked below and a default run never refuses on it
        kk_default = kk
        kk = default_k_within_budget(kk, ss, K, M_draws, dlt, nut_quantiles, exact_total, plan_gen,
                                      limits.current().max_transport_solves // 2)
        if kk < kk_default:
            k_rule += (f"; lowered from k = {kk_default} so that the certificate's exact transport solves fit "
                       f"dpsynth_core.limits max_transport_solves")
        m = kk**ss
    capped = None
    if n_synthetic is None:  # n is public under replace: capping the output size is post-processing
        m_syn, capped = limits.cap_rows(p.n, source="the public n (replace)", d=d)
    else:
        m_syn = check_int(n_synthetic, "n_synthetic", owner, low=1)
        limits.check_rows(m_syn, d, owner=owner)
    if isinstance(public, str):
        check_choice(public, "public", owner, PUBLIC_GENERATORS)
    gen = p.rng
    subsets = marginal_subsets(d, ss)
    order, rank = path_rank(kk, ss)

    # Step 1: query operator (owner-side values). The only read of the private rows: integer marginal
    # counts summed over the rows (in memory once; with Dask per partition, merged exactly), then
    # divided by the public n here, correctly rounded per cell, whatever the partitioning.
    v_true = p.rows.sum(marginal_counts, ss, kk, "path") / p.n
    # Step 2: Haar-transformed Laplace noise, per block (Eq. (7), Lemma 2)
    b = noise_scale(p.n, p.epsilon, d, ss, kk, exact_total=exact_total)
    eta = haar_block_noise(K, kk, ss, b, gen, exact_total=exact_total)
    v_dp = v_true + eta
    # Consistency projection (post-processing of v_DP): v_cons = c0 + Π (v_DP - c0), c0 the uniform tables
    cmap = consistency_map(d, ss, kk, exact_total=exact_total) if cons != "none" else None
    v_dp_row = v_dp[:, rank]
    v_cons_row = v_dp_row.copy() if cmap is None else 1.0 / m + consistent_part(v_dp_row - 1.0 / m, cmap)
    v_cons = v_cons_row[:, order]
    ledger = Ledger().add(f"noisy {ss}-marginals: Haar-transformed Laplace, scale {b:.4g} (Lemma 2"
                          + (", exact totals" if exact_total else "") + ")", p.epsilon)

    # Certificate's Monte Carlo draws (fresh noise, no data) and its exact-solve plan, before the work
    mc_eta = haar_block_noise(K, kk, ss, b, mc_gen, draws=M_draws, exact_total=exact_total)  # path order
    mc_eta_row = mc_eta[..., rank]
    mc_pi = consistent_part(mc_eta_row, cmap) if cons != "none" else None  # Π η for the fresh draws
    plan = 0
    if need_ut:
        plan = ut_solve_plan(mc_eta_row, kk, ss, dlt)
        if mc_pi is not None:
            plan += ut_solve_plan(mc_pi, kk, ss, dlt)
    budget = SolveBudget(owner, k=kk, s=ss, K=K, mc_draws=M_draws, soft=k is None)
    if plan > budget.limit and not budget.soft:
        budget.refuse(plan)  # an explicit choice: refused before Step 3 and before any exact solve

    # Public candidates (data-independent or given)
    pub_raw, pub_desc = public_points(public, psize, domain, kk, gen)
    support = discretise_support(pub_raw, kk) if snap else pub_raw
    cells = np.empty((K, support.shape[0]), dtype=np.int64)
    for bl, S in enumerate(subsets):
        cells[bl] = cell_of(support[:, S], kk)

    # Step 3: sparse LP over measures on the public support; its constraint matrix has about
    # K (N + 7 k^s) non-zeros (public sizes: K, k, the public support), checked before it is built
    nnz = K * (support.shape[0] + 7 * m)
    limits.check_planned(nnz, "max_lp_nonzeros", owner=owner, param="public_size", what="Step 3 LP non-zeros",
                         fix="pass a smaller public_size or k",
                         got=f"C({d}, {ss}) = {K} blocks x ({support.shape[0]} public points + 7 x {kk}^{ss} cells) "
                             f"= {nnz}")
    v_fit = v_cons if cons == "both" else v_dp
    if st3 == "L_T":
        lp = step3_lp(v_fit, rank[cells], kk)
    else:
        lp = step3_ut_lp(v_fit[:, rank], cells, kk, ss)
    alpha = lp["alpha"]

    # Rounding to points (largest remainder) and the released empirical measure
    counts = largest_remainder(alpha, m_syn)
    keep = counts > 0
    syn_support, syn_w = support[keep], counts[keep] / m_syn
    U_syn = np.repeat(support, counts, axis=0)
    U_syn = U_syn[gen.permutation(U_syn.shape[0])]

    # Certificate (Eq. (4)): Monte Carlo quantile with fresh noise (no data)
    mc_lt = proxy_lt(mc_eta, kk)
    q_lt = quantile_high(mc_lt, dlt)

    def to_row(w_path: np.ndarray) -> np.ndarray:  # row-major cell c sits at path position rank[c]
        return w_path[..., rank]

    def proj_terms(weights_pts: np.ndarray, pts: np.ndarray) -> tuple[np.ndarray, float]:
        u_path = marginal_bins(pts, ss, kk, "path", weights_pts)  # T mu of the public measure
        sup = 0.0 if snap else support_discretisation(pts, weights_pts, subsets, kk)
        return u_path, sup

    u_syn, sup_syn = proj_terms(syn_w, syn_support)
    u_lp, sup_lp = proj_terms(alpha, support)
    # the paper's Eq. (4) with G = L_T and G = U_T (always reported)
    lt_syn = float(proxy_lt(v_dp - u_syn, kk))
    lt_lp = float(proxy_lt(v_dp - u_lp, kk))
    terms = {"L_T": certificate_terms("L_T", k=kk, quantile=q_lt, proj_proxy=lt_syn, proj_support=sup_syn)}
    terms_lp = {"L_T": certificate_terms("L_T", k=kk, quantile=q_lt, proj_proxy=lt_lp, proj_support=sup_lp)}
    mc = {"L_T": mc_lt}
    owner_trace = {
        "true_marginals": to_row(v_true),
        "L_T(0,eta)": float(proxy_lt(eta, kk)),
        "n": p.n,
        "n_clamped": p.n_clamped,
    }
    if need_ut and not budget.soft:
        # the projection terms' plan (residual maxima over blocks; the direct KR terms of unsnapped points),
        # from the cheap bounds: an explicit choice is refused here, before any exact solve
        res_rows = [to_row(v_dp - u_syn), to_row(v_dp - u_lp)]
        if cons != "none":
            res_rows += [v_cons_row - to_row(u_syn), v_cons_row - to_row(u_lp)]
        plan += sum(ut_solve_plan(r_row, kk, ss) for r_row in res_rows)
        if cons != "none" and not snap:
            plan += sum(K * (solve_cost(m) + solve_cost(m + 1 + n_pts)) for n_pts in (syn_support.shape[0],
                                                                                    support.shape[0])
                        if m + 1 + n_pts <= DIRECT_MAX_NODES)
        if plan > budget.limit:
            budget.refuse(plan)
    if need_ut:
        # exact quantile and maxima, solving only the blocks and draws that decide them (ut_quantile)
        q_ut, mc_ut = ut_quantile(mc_eta_row, kk, ss, dlt, budget)
        ut_syn = ut_block_max(to_row(v_dp - u_syn), kk, ss, budget)
        ut_lp = ut_block_max(to_row(v_dp - u_lp), kk, ss, budget)
        terms["U_T"] = certificate_terms("U_T", k=kk, quantile=q_ut, proj_proxy=ut_syn, proj_support=sup_syn)
        terms_lp["U_T"] = certificate_terms("U_T", k=kk, quantile=q_ut, proj_proxy=ut_lp, proj_support=sup_lp)
        mc["U_T"] = mc_ut
        owner_trace["U_T(0,eta)"] = ut_block_max(to_row(eta), kk, ss)  # owner-side: never refused
    # the consistent certificate: Eq. (4) with G∘Π (package docstring)
    if cons != "none":
        mc_lt_c = proxy_lt(mc_pi[..., order], kk)
        q_lt_c = quantile_high(mc_lt_c, dlt)
        r_syn, r_lp = v_cons_row - to_row(u_syn), v_cons_row - to_row(u_lp)
        terms["L_T_consistent"] = certificate_terms(
            "L_T∘Π", k=kk, quantile=q_lt_c, proj_proxy=float(proxy_lt(r_syn[:, order], kk)), proj_support=sup_syn)
        terms_lp["L_T_consistent"] = certificate_terms(
            "L_T∘Π", k=kk, quantile=q_lt_c, proj_proxy=float(proxy_lt(r_lp[:, order], kk)), proj_support=sup_lp)
        mc["L_T_consistent"] = mc_lt_c
        owner_trace["L_T(0,Pi eta)"] = float(proxy_lt(consistent_part(to_row(eta), cmap)[:, order], kk))
        if need_ut:
            q_ut_c, mc_ut_c = ut_quantile(mc_pi, kk, ss, dlt, budget)
            mc["U_T_consistent"] = mc_ut_c
            owner_trace["U_T(0,Pi eta)"] = ut_block_max(consistent_part(to_row(eta), cmap), kk, ss)

            def ut_projection(r_row: np.ndarray, pts: np.ndarray, wts: np.ndarray, sup: float) -> dict:
                if snap or m + 1 + pts.shape[0] > DIRECT_MAX_NODES:
                    # snapped: the exact KR term is U_T of the block (the measures live on the centres); only
                    # the maximum over blocks enters the certificate
                    top = ut_block_max(r_row, kk, ss, budget) + sup
                    return {"per_block": np.array([top]), "exact": snap, "via_grid": float(top)}
                via_grid = np.array([ut_exact(row, kk, ss, budget) for row in r_row]) + sup
                if not all([budget.charge(m + 1 + pts.shape[0]) for _ in subsets]):  # a soft budget declined
                    return {"per_block": via_grid, "exact": False, "via_grid": float(via_grid.max())}
                direct = direct_projection(v_cons_row, pts, wts, subsets, kk, ss)
                return {"per_block": np.minimum(direct, via_grid), "exact": True, "via_grid": float(via_grid.max())}

            for store, (r_row, pts, wts, sup) in ((terms, (r_syn, syn_support, syn_w, sup_syn)),
                                                  (terms_lp, (r_lp, support, alpha, sup_lp))):
                pr = ut_projection(r_row, pts, wts, sup)
                t = certificate_terms("U_T∘Π", k=kk, quantile=q_ut_c, proj_proxy=float(pr["per_block"].max()),
                                       proj_support=0.0)
                t["projection_kind"] = ("exact KR distance ||T^-1 Π v_DP - P^S mu||, max over blocks" if pr["exact"]
                                        else "U_T(Π v_DP, T mu) + U(T^-1 T mu, mu) (too large for the exact term)")
                t["projection_via_grid"] = pr["via_grid"]
                store["U_T_consistent"] = t
    cert_key = f"{cert}_consistent" if cons != "none" else cert
    bound = terms[cert_key]["total"]

    section_5_3 = {
        "L_T(v_DP, T mu)": lt_syn,
        "L_T(0, eta) MC mean": float(np.mean(mc_lt)),
        "L_T(0, eta) MC q05": float(np.quantile(mc_lt, 0.05)),
        "L_T(0, eta) MC q95": float(np.quantile(mc_lt, 0.95)),
        "ratio to MC mean": lt_syn / float(np.mean(mc_lt)) if np.mean(mc_lt) > 0 else float("nan"),
        "note": "Section 5.3: once L_T(v_DP, T mu) is about L_T(v_DP, T mu_D) = L_T(0, eta), further "
                "optimisation of Step 3 (e.g. more public points) cannot be expected to help.",
    }
    if "U_T_consistent" in terms:
        section_5_3["U_T(Pi v_DP, T mu)"] = terms["U_T_consistent"]["projection_proxy"]
        section_5_3["U_T(0, Pi eta) MC mean"] = float(np.mean(mc["U_T_consistent"]))
    notes = [
        f"Public candidates: {pub_desc}" + ("; moved to their cell centres in T_k,d (Section 5.1)." if snap else "."),
        f"bound = certificate (Eq. 4, proxy {cert}): with probability >= {1 - dlt:g} over the noise the utility "
        f"loss (largest W1 over all {ss}-marginals, l_inf, unit cube) of the released points is at most "
        f"{bound:.4g}. The (1-δ)-quantile is the ⌈(1-δ)(M+1)⌉-th smallest of M = {M_draws} fresh noise draws (exceeded with probability at most δ).",
        ("Consistent certificate (trace key " + cert_key + "): Eq. (4) with the proxy composed with the "
         f"consistency projection Π ({'identity: too many constraints' if cmap is None else cmap['kind']}); "
         "the paper's Eq. (4) as printed is under key " + cert + f" ({terms[cert]['total']:.4g})."
         + (" Step 3 fitted Π v_DP." if cons == "both" else "")) if cons != "none"
        else "Certificate: the paper's Eq. (4) as printed (consistency='none').",
        "Only replace neighbours: the marginal histograms are normalised by the public size n.",
    ]
    params = {
        "s": ss, "k": kk, "k_rule": k_rule, "K": K, "cells_per_block": m, "haar_levels": levels_for(m),
        "delta_cert": dlt, "mc_draws": M_draws, "noise_scale": b, "sensitivity": 2.0 * K / p.n,
        "certificate": cert, "certificate_key": cert_key, "step3": st3, "noise": noise_kind, "consistency": cons,
        "consistency_projection": ("none" if cons == "none" else "identity (too large)" if cmap is None
                                   else cmap["kind"]), "public": pub_desc, "public_size": int(pub_raw.shape[0]),
        "support_size": int(support.shape[0]), "snap_public": snap, "n_synthetic": m_syn,
        "subsets": [list(S) for S in subsets], "path": "snake", "tie_break": TIE_BREAK,
    }
    if capped is not None:
        params["limits"] = capped
        notes.append(limits.cap_note(capped, owner))
    if budget.declined:  # the default grid's certificate met the solve limit: proven upper bounds took over
        params["certificate_upper_bounds"] = budget.declined
        notes.append(f"The certificate reached dpsynth_core.limits max_transport_solves ({budget.limit}): "
                     f"{budget.declined} exact transport solve(s) were replaced by their proven upper bounds, so "
                     f"the bound is valid but looser than the exact computation.")
    trace = {
        "subsets": [list(S) for S in subsets],
        "snake_order": np.asarray(order),
        "noisy_marginals": to_row(v_dp),
        "consistent_marginals": v_cons_row,
        "projected_marginals": to_row(u_syn),
        "lp_marginals": to_row(u_lp),
        "certificate": terms,
        "certificate_lp_measure": terms_lp,
        "mc_samples": mc,
        "lp": {k_: v_ for k_, v_ in lp.items() if k_ != "alpha"},
        "support": support,
        "weights": alpha,
        "section_5_3": section_5_3,
        "transport_solves": budget.used,
        "owner": owner_trace,
    }
    return Release(
        synthetic=domain.from_unit(U_syn), epsilon=p.epsilon, delta=0.0, neighbours=p.neighbours,
        mechanism=owner, domain=domain, ledger=ledger, params=params, bound=bound,
        bound_kind=f"certificate (Eq. 4, {cert}): high-probability (1-δ={1 - dlt:g}) upper bound on the utility "
                   f"loss of Eq. (1) for the released points; private",
        trace=trace, notes=notes,
    )

"""The mechanism: :func:`marginals`, its parameters (:class:`MarginalsConfig`) and its typed results
(:class:`MarginalsTrace`, :class:`MarginalsOwner`). The steps are in the other modules of this package;
the mathematics in the package docstring and docs/marginals.md.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import defaults, limits
from ...domain import Domain
from ...privacy import Ledger, SizeEstimate, resolve_size
from ...theory import BoundKind, Theory, marginal_rate
from ...validation import param_error
from ..contract import Config, Prepared, mechanism, n_public_param, n_synthetic_param, param
from ..release import OwnerView, Release, Trace
from ..sparse_marginals.certificate import mc_order
from .certificate import Certificate, blocks_of, certify
from .fit import DENSE_MAX_CELLS, DenseJoint, Measurement, fit_dense
from .noise import FAMILIES, NoisePlan, discrete_laplace_variance, plan_noise, size_from_totals
from .sampling import draw_rows, fine_masses
from .tables import Layout, marginal_counts, plan_layout
from .tree import TreeJoint, fit_tree

__all__ = ["marginals", "MarginalsConfig", "MarginalsTrace", "MarginalsOwner"]

OWNER = "marginals"
#: The fitted models (``model=...``): the dense joint grid (:mod:`.fit`) and the tree of 2-way tables (:mod:`.tree`).
MODELS: tuple[str, ...] = ("dense", "tree")


# ------------------------------------------------------------------------------------ parameters
@dataclass(frozen=True)
class MarginalsConfig(Config):
    """The parameters of :func:`marginals` (None: the study's rule, docs/marginals.md "Defaults")."""

    fine: int | None = param("int", None, "Bins of each numeric column's 1-way table (an integer column with at most "
                             "this many whole values gets one bin per value; with more, its smallest and largest "
                             "values alone and runs between); default: the study's rule.", low=2, high=1024)
    coarse: int | None = param("int", None, "Bins of each numeric axis of the 2-way tables (unions of fine bins); "
                               "default: the study's rule.", low=1, high=256)
    split: float | None = param("float", None, "Share of the budget spent on the 1-way tables (the rest on the "
                                "2-way tables); default: the study's rule.", low=0.05, high=0.95)
    noise: str = param("choice", "auto", "auto: discrete Laplace without delta (pure ε-DP); with delta the family "
                       "with the smaller noise variance. laplace: discrete Laplace, basic composition. gaussian: "
                       "Gaussian noise composed exactly (zCDP, needs delta).", choices=("auto",) + FAMILIES)
    model: str = param("choice", "auto", "The fitted distribution. auto: the dense joint grid while it has at most "
                       f"{defaults.MARGINALS_MAX_JOINT:,} cells, a tree of 2-way tables beyond (wide tables). dense: "
                       f"always the grid (refused above {defaults.MARGINALS_DENSE_CELLS:,} cells). tree: always the "
                       "tree.",
                       choices=("auto",) + MODELS, advanced=True)
    iterations: int = param("int", defaults.MARGINALS_ITERATIONS, "Most mirror-descent steps of the fit (fewer "
                            "fits the noise less).", low=1, high=100_000, log=True, advanced=True)
    beta: float = param("float", 0.05, "The certificate holds with probability at least 1 - beta over the noise.",
                        low=0.001, high=0.5, log=True)
    mc_draws: int = param("int", 39, "Monte Carlo draws of the noise law for the certificate's quantile (no data "
                          "used; the ⌈(1-beta)(M+1)⌉-th smallest is the quantile).", low=9, high=100_000, log=True,
                          advanced=True)
    n_public: int | None = n_public_param("Public dataset size (used as is: the release's size and the rules' n); "
                                          "without it (add/remove) the size comes from the tables' noisy totals and "
                                          "5% of ε buys a noisy n for a default rule.")
    n_synthetic: int | None = n_synthetic_param("Synthetic rows; default n (public, or read off the tables' noisy "
                                                "totals: post-processing).")

    def check_domain(self, domain: Domain, owner: str) -> None:
        """coarse <= fine; enough Monte Carlo draws for beta; an explicit grid's dense joint within its limit."""
        super().check_domain(domain, owner)
        mc_order(self.mc_draws, self.beta, owner)
        if self.fine is not None and self.coarse is not None:
            if self.coarse > self.fine:
                raise param_error(owner, "coarse", f"at most fine = {self.fine} (coarse bins are unions of fine bins)",
                                  self.coarse)
            layout = plan_layout(domain, self.fine, self.coarse)
            check_model(layout, choose_model(self.model, layout), self.mc_draws, owner)


def choose_model(asked: str, layout: Layout) -> str:
    """The model the release fits: the one asked for, or (``auto``) the dense grid while its cells are at most
    :data:`~dpsynth_core.defaults.MARGINALS_MAX_JOINT` (2^16, the cap the coarse rule aims for) and the tree
    beyond (public inputs only: the layout). Between 2^16 and 2^20 cells the dense grid can be built, but only at
    two coarse bins a numeric axis, and on 20 numeric columns it was slower and further from the data than the
    tree (docs/marginals.md, "Wide tables"). The golden pins' tables (at most 2^16 cells) keep the dense fit."""
    if asked != "auto":
        return asked
    return "dense" if layout.joint_cells <= defaults.MARGINALS_MAX_JOINT else "tree"


def check_model(layout: Layout, model: str, draws: int, owner: str) -> None:
    """Refuse, before anything is allocated, a plan above its limits (public inputs only), naming the limit: the
    dense joint grid above :data:`~.fit.DENSE_MAX_CELLS` cells or ``limits.max_cells``; for every model, the
    2-way tables and the certificate's Monte Carlo draws of them (``draws`` × their cells, held at once)."""
    if model == "dense":
        cells = layout.joint_cells
        if cells > DENSE_MAX_CELLS:
            shape = " x ".join(str(c) for c in layout.coarse_shape)
            raise param_error(owner, "coarse", f"a value whose coarse joint grid has at most {DENSE_MAX_CELLS:,} cells "
                              "(the dense fit's limit): pass a smaller coarse, fewer columns or categories, or "
                              "model='tree' (or 'auto')", f"{shape} = {cells:,} cells")
        limits.check_planned(cells, "max_cells", owner=owner, param="coarse", what="cells of the coarse joint grid",
                             fix="pass a smaller coarse", got=f"{cells:,} cells")
    held = draws * layout.cells_two
    limits.check_planned(held, "max_cells", owner=owner, param="coarse", what="cells of the 2-way tables' Monte Carlo "
                         "draws held by the certificate", fix="pass a smaller coarse or mc_draws, or fewer columns",
                         got=f"{draws} draws x {layout.cells_two:,} cells = {held:,}")


# --------------------------------------------------------------------------------- typed results
@dataclass(frozen=True)
class MarginalsTrace(Trace):
    """The differentially private intermediates: the layout, the noisy tables, the fitted joint, the certificate.

    ``noisy_one`` are the fine 1-way tables (one array per column), ``noisy_two`` the coarse 2-way tables
    ((C_i, C_j) per pair of ``layout.pairs``), ``joint`` the fitted distribution on the coarse grid
    (probabilities, one axis per column; None for the tree model of a wide table), ``model`` the fitted model
    (:class:`~.fit.DenseJoint` or :class:`~.tree.TreeJoint`), ``fine_masses`` the fine masses of each column the rows were
    drawn from, ``noise`` the noise plan and ``certificate`` the bound's terms."""

    layout: Layout
    noisy_one: list
    noisy_two: list
    joint: np.ndarray
    fine_masses: list
    noise: NoisePlan
    certificate: Certificate | None
    fit_iterations: int
    model: DenseJoint | TreeJoint | None = None


@dataclass(frozen=True)
class MarginalsOwner(OwnerView):
    """Owner view (NOT DP): the true fine 1-way and coarse 2-way counts."""

    true_one: list
    true_two: list


# ------------------------------------------------------------------------------------- mechanism
@mechanism(
    name="marginals",
    title="Marginal tables (multi-resolution)",
    paper=("Marginal-based synthesis in the family of Donhauser et al. (AISTATS 2024) [DLS+24] and McKenna et al. "
           "(private-pgm, [MSM19]); Gaussian noise composed exactly [DRS22]"),
    algorithm="Fine 1-way and coarse 2-way tables, a least-squares joint by mirror descent, a [DLS+24]-style "
              "certificate on the 2-way W1 (docs/marginals.md)",
    dp="pure",
    optional_delta=True,
    neighbours=("add_remove", "replace"),
    config=MarginalsConfig,
    theory=Theory(proven=False, rate=marginal_rate),
    categorical=True,
    summary="Every 1-way marginal on a fine grid and every 2-way marginal on a coarse one, noised (discrete Laplace, "
            "or Gaussian with delta), one joint distribution fitted to them all, rows drawn from it; a private bound "
            "on the W1 of the 2-way marginals.",
)
def marginals(p: Prepared[MarginalsConfig]) -> Release[MarginalsTrace, MarginalsOwner]:
    """Multi-resolution marginal tables: fine 1-way, coarse 2-way, one fitted joint, rows drawn from it.

    .. math:: \\tilde y_t = y_t(D) + \\eta_t, \\qquad
              \\hat p = \\arg\\min_{p \\in \\Delta} \\sum_t \\sum_c \\frac{(N (M_t p)_c - \\tilde y_{t,c})^2}{v_t}

    Every column's fine 1-way table and every pair's coarse 2-way table are counted in one pass over the
    rows (integer counts: the same from a Dask collection) and noised: discrete Laplace noise without δ
    (pure ε-DP, basic composition), with δ the noise family of smaller variance (Gaussian noise composed
    exactly: ρ-zCDP is √(2ρ)-GDP [DRS22]). One distribution on the coarse joint grid is fitted to all the
    noisy tables by mirror descent (:mod:`.fit`); inside each coarse bin the mass is spread over the fine
    bins by the noisy fine counts (:mod:`.sampling`); the release draws N rows (the public n, or the size
    read off the tables' noisy totals). ``rel.bound`` is a certificate ([DLS+24, Lemma 1] in spirit,
    :mod:`.certificate`): with probability at least 1 - beta, the largest W1 over all 2-way marginals between
    the data and the release is at most it.

    ``X`` (array, DataFrame or Dask collection, domain units) is read only through the marginal counts; the
    domain's bounds, integer columns and categories are public; ``delta=None`` is pure ε-DP; replace doubles
    every table's sensitivity. The settings are :class:`MarginalsConfig`'s (listed by ``help``).

    Returns
    -------
    Release[MarginalsTrace, MarginalsOwner]

    References
    ----------
    .. [DLS+24] K. Donhauser et al. Certified private data release for sparse Lipschitz functions. AISTATS 2024.
    .. [MSM19] R. McKenna, D. Sheldon, G. Miklau. Graphical-model based estimation and inference for
       differential privacy. ICML 2019.
    .. [DRS22] J. Dong, A. Roth, W. J. Su. Gaussian Differential Privacy. JRSS B 2022.
       See docs/references.md.
    """
    cfg, domain = p.config, p.domain
    ledger = Ledger()
    if cfg.noise == "gaussian" and not p.delta:
        raise param_error(p.owner, "noise", "'laplace' or 'auto' without delta (Gaussian noise is (ε, δ)-DP: pass "
                          "delta=...)", "gaussian")
    size = _rule_size(p, ledger)
    eps = p.epsilon - ledger.epsilon
    layout, plan, rules, kind = _plan(p, size, eps)
    plan.ledger_entries(ledger, layout.d, len(layout.pairs), _bins_text(layout, "fine"), _bins_text(layout, "coarse"))
    one, two = p.rows.sum(marginal_counts, layout)
    noisy_one = [c + plan.draw(0, c.shape, p.rng) for c in one]
    noisy_two = [(c + plan.draw(1, c.shape, p.rng)).reshape(layout.columns[i].coarse, layout.columns[j].coarse)
                 for c, (i, j) in zip(two, layout.pairs, strict=True)]
    n_hat, n_source = _release_size(p, size, layout, plan, noisy_one, noisy_two)
    model, U, masses, m, capped = _fit_and_draw(p, layout, plan, kind, noisy_one, noisy_two, n_hat, n_source)
    cert = _certificate(p, layout, plan, noisy_two, U)
    trace = MarginalsTrace(layout=layout, noisy_one=noisy_one, noisy_two=noisy_two,
                           joint=model.p if kind == "dense" else None, fine_masses=masses, noise=plan,
                           certificate=cert, fit_iterations=model.iterations, model=model)
    owner = MarginalsOwner(n=p.n, n_clamped=p.n_clamped, true_one=one, true_two=two)
    params = _params(p, layout, plan, rules, model, n_hat, n_source, m, size, cert)
    if plan.family == "laplace" and p.delta:  # the tables are pure ε-DP: the release states δ = 0 (stronger)
        p = dataclasses.replace(p, delta=0.0)
    return p.finish(_to_domain(domain, U), ledger=ledger, trace=trace, owner=owner, params=params,
                    bound=None if cert is None else cert.bound, bound_kind=_bound_kind(cert),
                    bound_type=BoundKind.NONE if cert is None else BoundKind.CERTIFICATE,
                    notes=_notes(p, layout, plan, cert, n_source, model), capped=capped)


# ------------------------------------------------------------------------------------------ steps
def _rule_size(p: Prepared[MarginalsConfig], ledger: Ledger) -> SizeEstimate | None:
    """The n a default rule needs: public (``n_public``, or n under replace) at no cost; under add/remove
    without ``n_public`` a noisy size for 5% of ε (on the ledger). None when no rule needs n."""
    cfg = p.config
    if cfg.fine is not None and cfg.coarse is not None:
        if cfg.n_public is not None or p.neighbours == "replace":
            return resolve_size(p.n, epsilon=p.epsilon, neighbours=p.neighbours, n_public=cfg.n_public, rng=p.rng,
                                owner=p.owner)
        return None
    size = resolve_size(p.n, epsilon=p.epsilon, neighbours=p.neighbours, n_public=cfg.n_public, rng=p.rng,
                        owner=p.owner)
    if size.epsilon_spent:
        ledger.add("noisy size n̂ for the default bins (discrete Laplace)", size.epsilon_spent)
    return size


def _family(p: Prepared[MarginalsConfig], eps: float, d: int, pairs: int, split: float,
            cells: tuple[int, int]) -> str:
    """The noise family: the one asked for, or the rule of :func:`dpsynth_core.defaults.marginals_noise`."""
    if p.config.noise != "auto":
        return p.config.noise
    if not p.delta:
        return "laplace"
    lap = plan_noise("laplace", eps, 0.0, p.neighbours, d, pairs, split)
    gau = plan_noise("gaussian", eps, p.delta, p.neighbours, d, pairs, split)
    return defaults.marginals_noise(p.delta, lap.variances, gau.variances, cells)


def _rule_bins(p: Prepared[MarginalsConfig], size: SizeEstimate | None, eps: float, split: float,
               cap: float) -> tuple[int, int]:
    """The fine and coarse bins: given values, or the study's rules at the rule size, the coarse rule keeping the
    joint grid at most ``cap`` cells (the dense model's cap; no cap for the tree)."""
    cfg, domain = p.config, p.domain
    if cfg.fine is not None and cfg.coarse is not None:  # nothing to choose (the loop below would only repeat them)
        return cfg.fine, cfg.coarse
    d, pairs = domain.d, domain.d * (domain.d - 1) // 2
    fine, coarse = cfg.fine or 16, cfg.coarse or 4
    for _ in range(3):  # the rules depend on the noise, which depends on the cells: a short fixed point
        layout = plan_layout(domain, fine, coarse)
        family = _family(p, eps, d, pairs, split, (layout.cells_one, layout.cells_two))
        # the bin rules were fitted with the 1-way tables at the share MARGINALS_RULE_SPLIT: they read the noise
        # s.d. of that share (the study: geometric-mean regret 1.049 this way, 1.059 at the split in use)
        plan = plan_noise(family, eps, p.delta, p.neighbours, d, pairs, defaults.MARGINALS_RULE_SPLIT)
        if cfg.fine is None:
            fine = defaults.marginals_fine(size.n, math.sqrt(plan.variances[0]))
        if cfg.coarse is None:
            sd2 = math.sqrt(plan.variances[1]) if pairs else 1.0
            coarse = defaults.marginals_coarse(size.n, sd2, fine, domain.k, math.prod(domain.category_sizes), cap=cap)
        if cfg.fine is None:  # every coarse bin the union of as many fine bins (defaults.marginals_align)
            fine = defaults.marginals_align(fine, coarse)
    return fine, coarse


def _plan(p: Prepared[MarginalsConfig], size: SizeEstimate | None,
          eps: float) -> tuple[Layout, NoisePlan, dict, str]:
    """The bins, the budget split, the noise and the model: given values, or the study's rules at the rule size.

    The model follows from the layout at the dense cap (:func:`choose_model`); the tree's coarse rule has no
    joint cap (its cells grow with the pairs, not with the product of the axes)."""
    cfg, domain = p.config, p.domain
    d, pairs = domain.d, domain.d * (domain.d - 1) // 2
    split = cfg.split if cfg.split is not None else defaults.marginals_split(d)
    rules = {"split": "given" if cfg.split is not None else "defaults.marginals_split(d)"}
    fine, coarse = _rule_bins(p, size, eps, split, defaults.MARGINALS_MAX_JOINT)
    model = choose_model(cfg.model, plan_layout(domain, fine, coarse))
    if model == "tree" and cfg.coarse is None:
        fine, coarse = _rule_bins(p, size, eps, split, math.inf)
    layout = plan_layout(domain, fine, coarse)
    family = _family(p, eps, d, pairs, split, (layout.cells_one, layout.cells_two))
    plan = plan_noise(family, eps, p.delta, p.neighbours, d, pairs, split)
    rules["fine"] = ("given" if cfg.fine is not None else
                     "defaults.marginals_fine(n, noise s.d. of a 1-way count at the reference share), made a multiple "
                     "of the coarse bins (defaults.marginals_align)")
    rules["coarse"] = ("given" if cfg.coarse is not None else "defaults.marginals_coarse(n, noise s.d. of a 2-way count "
                       "at the reference share, fine, numeric axes, categories)")
    rules["noise"] = "given" if cfg.noise != "auto" else "defaults.marginals_noise (δ given or not; smaller variance)"
    check_model(layout, model, cfg.mc_draws, p.owner)
    return layout, plan, rules, model


def _release_size(p: Prepared[MarginalsConfig], size: SizeEstimate | None, layout: Layout, plan: NoisePlan,
                  noisy_one: list, noisy_two: list) -> tuple[float, str]:
    """The size the fit and the release use: the public n, or the inverse-variance weighted mean of every
    table's noisy total (and of the noisy size, when one was bought): post-processing of DP outputs."""
    if size is not None and size.source in ("n_public", "replace"):
        return float(size.n), size.source
    totals = [(float(t.sum()), t.size * plan.variances[0]) for t in noisy_one]
    totals += [(float(t.sum()), t.size * plan.variances[1]) for t in noisy_two]
    source = "the tables' noisy totals"
    if size is not None:
        totals.append((float(size.n), discrete_laplace_variance(1.0 / size.epsilon_spent)))
        source += " and the noisy size"
    value, _ = size_from_totals(totals)
    return max(1.0, value), source


def _fit_and_draw(p: Prepared[MarginalsConfig], layout: Layout, plan: NoisePlan, kind: str, noisy_one: list,
                  noisy_two: list, n_hat: float, n_source: str) -> tuple[Any, np.ndarray, list, int, dict | None]:
    """The model (``kind``: dense grid or tree), the release size (capped by the limits when it is n̂) and the rows
    drawn from the model (unit coordinates, categorical codes), with each column's fine masses."""
    cfg = p.config
    meas = _measurements(layout, plan, noisy_one, noisy_two)
    if kind == "dense":
        model = fit_dense(layout.coarse_shape, meas, n_hat, iterations=cfg.iterations)
    else:
        model = fit_tree(layout.coarse_shape, meas, n_hat)
    m, capped = ((cfg.n_synthetic, None) if cfg.n_synthetic is not None
                 else limits.cap_rows(max(1, int(round(n_hat))), source=f"n̂ from {n_source}", d=p.domain.d))
    masses = [fine_masses(col, noisy_one[j], model.marginal((j,))) for j, col in enumerate(layout.columns)]
    U = draw_rows(layout, model.sample(m, p.rng), masses, p.rng)
    return model, U, masses, m, capped


def _measurements(layout: Layout, plan: NoisePlan, noisy_one: list, noisy_two: list) -> list[Measurement]:
    """The tables the fit matches: each fine 1-way table summed into its coarse bins (variance: the number of
    fine bins summed times a count's variance) and every coarse 2-way table."""
    out = []
    for j, (col, y) in enumerate(zip(layout.columns, noisy_one, strict=True)):
        summed = np.bincount(col.to_coarse, weights=y, minlength=col.coarse)
        var = np.bincount(col.to_coarse, minlength=col.coarse) * plan.variances[0]
        out.append(Measurement((j,), summed, var))
    for (i, j), y in zip(layout.pairs, noisy_two, strict=True):
        out.append(Measurement((i, j), y, np.full(y.shape, plan.variances[1])))
    return out


def _certificate(p: Prepared[MarginalsConfig], layout: Layout, plan: NoisePlan, noisy_two: list,
                 U: np.ndarray) -> Certificate | None:
    """The bound on the 2-way W1 (:mod:`.certificate`), its Monte Carlo draws from a child stream of the rng."""
    if not layout.pairs:
        return None
    cfg = p.config
    if cfg.n_public is not None or p.neighbours == "replace":
        size, source, weights = float(cfg.n_public or p.n), "public n", None
    else:
        weights = np.array([1.0 / y.size for y in noisy_two])
        size = max(1.0, math.fsum(w * float(y.sum()) for w, y in zip(weights, noisy_two, strict=True))
                   / math.fsum(weights))
        source = "the 2-way tables' noisy totals"
    (child,) = p.rng.spawn(1)
    return certify(layout, blocks_of(layout), noisy_two, lambda shape, g: plan.draw(1, shape, g), U, size=size,
                   size_source=source, total_weights=weights, beta=cfg.beta, draws=cfg.mc_draws, rng=child)


def _to_domain(domain: Domain, U: np.ndarray) -> Any:
    """Unit rows (categorical codes) in the domain's units: an array, or a DataFrame on a mixed domain."""
    if domain.is_mixed:
        return domain.from_unit(U)
    return np.clip(domain.from_unit(U), domain.lower_array, domain.upper_array)


def _bins_text(layout: Layout, which: str) -> str:
    sizes = sorted({getattr(c, which) for c in layout.columns if c.kind == "numeric"})
    if which == "fine":
        return f"{', '.join(map(str, sizes)) or 'no'} fine bins per numeric column"
    return f"{', '.join(map(str, sizes)) or 'no'} coarse bins per numeric axis"


def _params(p: Prepared[MarginalsConfig], layout: Layout, plan: NoisePlan, rules: dict, model: DenseJoint | TreeJoint,
            n_hat: float, n_source: str, m: int, size: SizeEstimate | None, cert: Certificate | None) -> dict:
    """The public record of the release (exported; the golden pin hashes it)."""
    numeric = [c for c in layout.columns if c.kind == "numeric"]
    out = {
        "fine": numeric[0].fine if numeric else None, "coarse": numeric[0].coarse if numeric else None,
        "columns": layout.describe(), "pairs": [list(t) for t in layout.pairs], "joint_cells": layout.joint_cells,
        "split": plan.epsilons[0] / max(sum(plan.epsilons), 1e-300) if plan.rho is None else plan.rhos[0] / plan.rho,
        "noise": plan.family, "noise_scales": list(plan.scales), "noise_variances": list(plan.variances),
        "sensitivity": plan.sensitivity, "rho": plan.rho, "rules": rules, "iterations": p.config.iterations,
        "fit_iterations": model.iterations, "n_hat": n_hat, "n_source": n_source, "n_synthetic": m,
        "size": None if size is None else size.to_dict(),
    }
    if cert is not None:
        out["certificate"] = cert.to_dict()
    if isinstance(model, TreeJoint):  # only wide releases carry the key: the dense releases' record is unchanged
        out["model"] = {"kind": "tree", "edges": [list(e) for e in model.edges], "cells": model.cells,
                        "rule": f"the dense joint grid would have more than {defaults.MARGINALS_MAX_JOINT:,} cells"
                                if p.config.model == "auto" else "given"}
    return out


def _bound_kind(cert: Certificate | None) -> str:
    if cert is None:
        return ""
    return (f"certificate: with probability >= {1 - cert.beta:g} over the noise, the largest W1 over all 2-way "
            "marginals (unit-cube units; l_inf, category weights on categorical columns)")


def _notes(p: Prepared[MarginalsConfig], layout: Layout, plan: NoisePlan, cert: Certificate | None,
           n_source: str, model: DenseJoint | TreeJoint) -> list[str]:
    """The plain-language caveats of the release."""
    noise = ("discrete Laplace noise (pure ε-DP, basic composition)" if plan.family == "laplace" else
             f"Gaussian noise composed exactly (ρ = {plan.rho:.4g}-zCDP, i.e. √(2ρ)-GDP, gives the stated (ε, δ))")
    if isinstance(model, TreeJoint):
        fitted = (f"the coarse joint grid would have {layout.joint_cells:,} cells, so the fitted distribution is a tree "
                  f"of {len(model.edges)} pairs (the largest dependence in the noisy tables, chosen from them at no "
                  "privacy cost), fitted to them exactly, and the rows were drawn from it; pairs off the tree are "
                  "independent given the path between them")
    else:
        fitted = (f"one joint distribution on the coarse grid ({layout.joint_cells:,} cells) was fitted to them and the "
                  "rows drawn from it")
    notes = [f"Every column's 1-way table and every pair's 2-way table were measured with {noise}; {fitted}. Release "
             f"size: {n_source}."]
    if cert is not None:
        notes.append(f"bound = certificate: with probability >= {1 - cert.beta:g} over the noise, every 2-way marginal of "
                     f"the release is within W1 {cert.bound:.3g} of the data's (unit-cube units). It is about pairs of "
                     "columns only, not the whole table, and its smallest possible value is half the widest coarse bin.")
    else:
        notes.append("One column: no 2-way marginal, no certificate.")
    if plan.family == "laplace" and p.delta:
        notes.append(f"A delta was given ({p.delta:g}) but discrete Laplace noise had the smaller variance here: the "
                     "release is pure ε-DP (δ = 0), a stronger guarantee than asked for.")
    ints = [c.name for c in layout.columns if c.one_per_value]
    if ints:
        notes.append(f"Integer columns with one bin per whole value: {', '.join(ints)} (the release draws the values "
                     "themselves).")
    return notes

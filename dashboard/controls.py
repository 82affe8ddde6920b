"""How a mechanism's parameters appear to students (plain text, no Streamlit): a label, labels for the choices,
and whether a parameter belongs behind "More settings". The code name and the mathematics stay in the help
tooltip; :func:`dashboard.widgets.param_controls` builds the widgets from the registry's schema and these.

Also how the dashboard words the library's advice (:class:`~dpsynth_core.validation.Advice`: a parameter,
a value, why): as the control that does it (:data:`ADVICE_CONTROLS`, :func:`with_controls`), never as a
Python keyword or a command-line flag."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Control", "CONTROLS", "DROP_BAD_ROWS", "DROP_MISSING", "ADVICE_CONTROLS", "advice_words",
           "with_controls"]


@dataclass(frozen=True)
class Control:
    """How a mechanism parameter appears to a student: a label, labels for its choices, and whether it
    belongs behind "More settings". The code name and the mathematics stay in the help tooltip."""

    label: str
    choices: dict = field(default_factory=dict)
    advanced: bool = False


#: mechanism -> parameter -> Control (parameters not listed keep their schema's name and place).
CONTROLS: dict[str, dict[str, Control]] = {
    "pmm": {
        "depth": Control("Tree depth (auto if empty)"),
        "depth_rule": Control("Depth rule", {"auto": "recommended", "paper": "the paper's", "bound": "smallest bound"},
                              advanced=True),
        "noise": Control("Noise per level", {"optimal": "more ε for the deep levels", "uniform": "equal"},
                         advanced=True),
        "consistency": Control("Make counts consistent by", {"least_squares": "least squares (recommended)",
                                                             "proportional": "proportional split",
                                                             "uniform": "equal split"}),
        "placement": Control("Synthetic points in a leaf", {"uniform": "at random", "center": "at the centre"},
                             advanced=True),
        "n_public": Control("Public dataset size (if known)", advanced=True),
    },
    "psmm": {
        "cells": Control("Grid cells (auto if empty)"),
        "projection": Control("Turn the noisy counts into a distribution by",
                              {"bl": "the closest distribution (projection)", "clip": "clipping and rescaling"}),
        "n_synthetic": Control("Synthetic points (auto if empty)", advanced=True),
        "n_public": Control("Public dataset size (if known)", advanced=True),
    },
    "haar_walk": {
        "grid": Control("Grid cells per axis (auto if empty)"),
        "grid_rule": Control("Grid rule", {"study": "chosen by the defaults study", "log": "the earlier εn/log rule",
                                           "paper": "the paper's (about εn cells)"}, advanced=True),
        "path": Control("Path through the grid", {"snake": "snake (row by row)", "hilbert": "Hilbert curve",
                                                  "mst": "spanning-tree tour"}),
        "projection": Control("Turn the noisy walk into a distribution by",
                              {"isotonic": "the closest distribution (projection)", "clip": "clipping"}),
        "rounding": Control("Rounding to points", advanced=True),
        "noise": Control("Noise", {"discrete": "integer (discrete Laplace)", "continuous": "continuous Laplace"},
                         advanced=True),
        "n_synthetic": Control("Synthetic points (auto if empty)", advanced=True),
        "n_public": Control("Public dataset size (if known)", advanced=True),
    },
    "sparse_marginals": {
        "s": Control("Columns per marginal"),
        "k": Control("Cells per axis (auto if empty)"),
        "public": Control("Candidate points", {"uniform": "random in the box", "grid": "a regular grid"}),
        "public_size": Control("Candidate points to draw"),
        "snap_public": Control("Snap candidates to the grid", advanced=True),
        "certificate": Control("Certificate", {"U_T": "tight (transport on the grid)",
                                               "L_T": "simple (running sums)"}, advanced=True),
        "delta_cert": Control("Certificate may fail with probability β"),
        "step3": Control("Fit the synthetic points with", {"L_T": "running sums", "U_T": "transport on the grid"},
                         advanced=True),
        "noise": Control("Noise", {"exact_total": "keeps the total exact", "paper": "the paper's"}, advanced=True),
        "consistency": Control("Make the noisy tables agree", {"certificate": "for the certificate",
                                                               "both": "for the fit and the certificate",
                                                               "none": "no"}, advanced=True),
        "mc_draws": Control("Noise simulations for the certificate", advanced=True),
        "n_synthetic": Control("Synthetic points (auto if empty)", advanced=True),
    },
    "marginals": {
        "fine": Control("Bins of a 1-way table (auto if empty)"),
        "coarse": Control("Bins per axis of a 2-way table (auto if empty)"),
        "split": Control("Share of ε for the 1-way tables (auto if empty)"),
        "model": Control("Fit the tables with", {"auto": "as the table's size says", "dense": "the whole joint grid",
                                                 "tree": "a tree of pairs (wide tables)"}, advanced=True),
        "beta": Control("Certificate may fail with probability β", advanced=True),
        "iterations": Control("Steps of the fit", advanced=True),
        "mc_draws": Control("Noise simulations for the certificate", advanced=True),
        "n_public": Control("Public dataset size (if known)", advanced=True),
        "n_synthetic": Control("Synthetic rows (auto if empty)", advanced=True),
    },
    "private_evolution": {
        "iterations": Control("Iterations (auto if empty)"),
        "n_synthetic": Control("Synthetic points (auto if empty)"),
        "init": Control("Start from", {"uniform": "random points in the box", "public": "public data",
                                       "origin": "one corner (the origin)",
                                       "private": "the private data (NOT private: teaching only)",
                                       "interpolate": "shrunken private data (NOT private: teaching only)"}),
        "histogram": Control("Noisy votes, then", {"threshold": "drop small ones and renormalise",
                                                   "dbl": "closest distribution (small sets)",
                                                   "laplace_threshold": "Laplace votes with a threshold"},
                             advanced=True),
        "threshold": Control("Threshold on the votes", advanced=True),
        "alpha": Control("Smallest step of the variations (auto if empty)", advanced=True),
        "beta": Control("Shrink factor of the teaching start", advanced=True),
        "region": Control("Work inside", {"box": "the box", "ball": "the ball inside the box"}, advanced=True),
        "metric": Control("Nearest means", {"auto": "straight-line (with categories: the mixed distance)",
                                            "l2": "straight-line distance", "l1": "city-block distance",
                                            "linf": "largest-coordinate distance"}, advanced=True),
    },
    "low_dim": {
        "plan": Control("Plan", {"study": "the defaults study's (may skip the projection)",
                                 "paper": "the paper's (always project)"}),
        "target_dim": Control("Dimension of the private plane d′ (auto if empty)"),
        "subroutine": Control("Inside the plane use", {"auto": "as the plan says", "pmm": "the partition tree (PMM)",
                                                       "psmm": "the projected grid (PSMM)"}),
        "adaptive": Control("Choose d′ from the noisy spectrum", advanced=True),
        "box": Control("Box inside the plane", {"auto": "as the plan says (the paper's)", "paper": "the paper's",
                                                "projected_cube": "the projected cube"}, advanced=True),
        "budget_split": Control("Budget split (covariance, mean, plane)",
                                {"auto": "as the plan says (thirds)", "thirds": "thirds",
                                 "subroutine": "0.2, 0.1, 0.7"}, advanced=True),
        "covariance_noise": Control("Covariance noise", {"tight": "exact sensitivity", "paper": "the paper's"},
                                    advanced=True),
    },
    "flat_histogram": {
        "bins": Control("Cells per axis (auto if empty)"),
        "n_synthetic": Control("Synthetic points (auto if empty)", advanced=True),
    },
}


#: The upload form's boxes that drop rows (their labels, named by the advice below).
DROP_BAD_ROWS = "Drop the rows with bad cells"
DROP_MISSING = "Drop the rows with missing values"

#: The library's advice (``Advice.param``) as the dashboard's control that does it, or None where the
#: dashboard has no such control: the W1 method and its time budget are the page's own choice (the interactive
#: budget, docs/transport.md), so a page keeps its certified interval and says why instead of advising them.
ADVICE_CONTROLS: dict[str, str | None] = {
    "drop_bad_rows": f"the box *{DROP_BAD_ROWS}* of the upload form",
    "missing": f"the box *{DROP_MISSING}* of the upload form",
    "bounds": "the bound boxes of the upload form on the Data and bounds page",
    "method": None,
    "max_seconds": None,
}


def advice_words(advice) -> str | None:
    """One piece of the library's advice as the dashboard's control ("the box *Drop the rows with bad cells* of
    the upload form"), or None when the dashboard has no control for it. An advice the table does not know is an error
    here (a new option in the library gets its words, or its None, in :data:`ADVICE_CONTROLS`)."""
    if advice.param not in ADVICE_CONTROLS:
        raise KeyError(f"The dashboard has no words for the library's advice {advice.param!r}: add it to "
                       "dashboard.controls.ADVICE_CONTROLS.")
    return ADVICE_CONTROLS[advice.param]


def with_controls(message: str, advice) -> str:
    """The library's ``message`` with each piece of ``advice`` that the dashboard has a control for named by that
    control: after the advice's reason where the message says it ("drop the rows that hold such cells (the box
    *Drop the rows with bad cells* of the upload form)"), otherwise at the end."""
    text = str(message)
    for a in advice:
        words = advice_words(a)
        if words is None:
            continue
        if a.why and a.why in text:
            text = text.replace(a.why, f"{a.why} ({words})", 1)
        else:
            text = f"{text.rstrip().rstrip('.')} ({words})."
    return text

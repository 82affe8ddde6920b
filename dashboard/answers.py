"""The teacher's key: a short answer to each question a lesson asks the class (plain text, no Streamlit).

:data:`ANSWERS` maps a page's URL to one answer per question of its lesson (:attr:`dashboard.lessons.Lesson.ask`),
in the same order; the lesson box shows them folded, under the questions. Each answer was checked against what
its page computes (the figures it names are the page's own, at the default settings and the teaching seed).
"""

from __future__ import annotations

__all__ = ["ANSWERS"]

ANSWERS: dict[str, tuple[str, ...]] = {
    "home": (
        "The noise on PMM's counts shrinks like 1/ε: at ε = 100 it is far below one row, so every release "
        "reproduces the patient's small group exactly and its count says whether the patient is in the table. "
        "The guarantee allows a factor e^100 ≈ 2.7 × 10^43 between the two tables: it promises nothing a guess "
        "would notice.",
        "Two points of [0, 1]^d are at most 1 apart in the largest-coordinate distance, and W1 is the average "
        "distance mass travels under the best transport plan: an average of numbers at most 1.",
        "By at most 0.02: x ↦ x₁ is 1-Lipschitz (|x₁ − y₁| ≤ max_i |x_i − y_i|), and by the "
        "Kantorovich–Rubinstein duality the averages of a 1-Lipschitz function differ by at most W1. In the "
        "data's units: at most 0.02 times the column's range."),
    "data": (
        "The bounds would be a statistic of the data released without noise: adding or removing the oldest "
        "patient or the richest person moves them, so whoever reads the bounds learns that record's value. The "
        "extremes are the most identifying values of a table.",
        "Every income above 100 is moved onto 100 before the mechanism sees it (the page warns with the share "
        "of rows clamped), so the synthetic incomes all lie in [0, 100] and the top of the distribution piles up "
        "at 100. The guarantee still holds; only what the release says about high incomes is lost.",
        "A category that appears only because one person has it reveals that person, as a count of 1 would. "
        "Declared categories come from the form, not from the rows: the list is the same with or without "
        "anyone.",),
    "pmm": (
        "Because the error of a level adds up over all its cells: level j has 2^j counts, each misplacing mass "
        "by about its parent cell's diameter, so its noise costs σ_j Δ_{j−1}, with Δ the total diameter of the "
        "level's cells, which grows with depth. Minimising Σ σ_j Δ_{j−1} under the budget gives σ_j ∝ "
        "1/√Δ_{j−1}: the deep levels get the larger share (see *Noise per level*).",
        "Each fine cell would carry noise of the full scale, and a coarse region's count would be the sum of "
        "many noisy cells, its error growing like the square root of their number: the big picture would be "
        "blurred as much as the detail. The tree measures large regions directly, with small relative noise.",
        "Two rows of different categories are as far apart as two rows can be (distance 1), so a cell that "
        "mixes categories has the largest diameter whatever its numbers. Splitting the categories first makes "
        "the cells small fast, and a misplaced synthetic row then errs by a small numeric distance instead of "
        "by a whole category.",),
    "psmm": (
        "Clipping sets the negative cells to 0, which adds mass: the total exceeds 1, and normalising shrinks "
        "every positive cell in proportion, including the cells that are only noise in empty regions. Mass "
        "stays where there were no data and W1 pays the distance to move it back; the projection instead "
        "cancels negative mass against nearby positive mass.",),
    "random_walk": (
        "On a line W1 is the area between the two cumulative distribution functions, and the synthetic one at "
        "cell i is the running sum of the noisy counts up to i. So W1's error is the running sum of the noise: "
        "large single noises that cancel cost nothing, a small drift that accumulates costs a lot.",
        "Cells are placed on the line at the distance travelled along the path, and each step goes to a "
        "neighbouring cell; two places on the line at distance t are at most t apart in the square (triangle "
        "inequality along the path). So the path's map is 1-Lipschitz: a transport plan on the line gives one "
        "in the square at no larger cost.",),
    "sparse_marginals": (
        "The loss is at most the grid's resolution 1/(2k), plus how far the noisy tables are from the true ones, "
        "plus how far the released points' tables are from the noisy ones (triangle inequality). The last is "
        "computed from private outputs; the middle one is the noise alone, whose distribution is known: its "
        "(1 − β)-quantile is simulated from fresh noise draws, without the data. So the sum is private and "
        "holds with probability at least 1 − β (β: the page's 'Certificate may fail with probability').",),
    "marginals": (
        "The budget is split between the tables and each table pays for its share: a record moves one cell of every "
        "table, so a group of T tables has sensitivity T and its noise grows with T. What wins is the size of the "
        "cells: a 1-way cell holds hundreds of records, a small cell of the whole six-column space a handful, so the "
        "noise that is large next to one record is small next to hundreds.",
        "Anything that needs three columns at once beyond what the pairs imply, e.g. whether the link between age "
        "and blood pressure differs between regions for diabetics only; and detail finer than a coarse bin within "
        "a pair (the correlation inside a cell): no table measured them, the fit fills them in with the smoothest "
        "joint that agrees with the tables.",
        "The fit searches only among probability distributions (non-negative, summing to one) for the one whose "
        "tables are closest to the noisy ones; the noisy counts are its data, not its answer. A negative noisy "
        "count pulls its cell's probability towards zero, never below.",),
    "private_evolution": (
        "Its votes get Gaussian noise, and Gaussian noise never gives a pure ε: the ratio of two Gaussian "
        "densities shifted by the sensitivity is unbounded in the tails, so a small probability δ of a larger "
        "loss must be allowed. PMM's Laplace noise has a bounded ratio, e^ε, everywhere.",
        "The noise on the votes: with n rows and its share of the budget, each candidate's vote count carries "
        "noise of a fixed size, so detail that few real rows vote for is lost in it. The number of synthetic "
        "points and the size of the last variations set the finest detail the cloud can show.",),
    "low_dim": (
        "A share of ε (a third each for the covariance, the mean and the mechanism in the plane, on this page) "
        "buys a noisy covariance and mean; the mechanism in the plane gets only the rest. It pays off because a "
        "grid mechanism's W1 shrinks like (εn)^(−1/d): in d′ = 2 dimensions instead of 3 (or 64) the rate is so "
        "much better that it outweighs the smaller budget and the tilt of the private plane, once εn is large.",),
    "rates": (
        "The noise on a count has a scale of about 1/ε, and a count divided by n is a frequency with noise "
        "1/(εn): the theory's bounds depend on ε and n through εn only. (A noisy size spends a small share of ε, "
        "and a finite sample has its own error, so measured curves agree up to that.)",),
    "compare": (
        "Their privacy proof uses n as a fixed number: the certified marginals divide each table by the public n "
        "(its sensitivity is 2K/n), the low-dimensional mechanism's covariance sensitivity is computed with n. "
        "Under add / remove one record, n itself is private and their analysis does not cover it.",),
    "audit": (
        "It shows that for this pair of datasets, this event and this number of releases, no privacy loss above "
        "ε̂ was seen: ε̂ is a lower bound, valid with the stated confidence. Another pair or event could reveal "
        "more, and the number of releases caps how large an ε̂ it can show (with 1,000 releases about 5). Only a "
        "proof shows privacy: the mechanism's analysis and its ledger.",
        "ε̂ compares a lower bound on an event's probability on one dataset with an upper bound on the other. "
        "Even an event seen in all 750 test releases on D and in none on D' keeps an upper bound of about "
        "5/750 on D' (95% confidence over the tested events), so the ratio is at most about 150 = e^5. Seeing "
        "up to ε takes roughly 5·e^ε test releases.",),
}

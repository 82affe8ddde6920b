"""The lesson path: what each page teaches, what to try, what to see, what to ask (plain text, no Streamlit).

A teacher walks the pages in :data:`ORDER` (the navigation's order), from Home to the Audit. Each
:class:`Lesson` gives a title for people, one sentence on what the page teaches, two or three things to try with the
page's own controls, what a student should see, and questions to ask the class. The papers are cited
by their entries in docs/references.md (authors, title, year, link). The teacher's answers to the questions are in
:mod:`dashboard.answers`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .registry import PAGES

__all__ = ["Lesson", "Paper", "LESSONS", "ORDER", "PAPERS", "step_of", "neighbours_of"]


@dataclass(frozen=True)
class Paper:
    """A paper as people cite it: authors, title, venue and year, and where to read it."""

    key: str
    authors: str
    title: str
    venue: str
    url: str

    def cite(self) -> str:
        return f"{self.authors}, [{self.title}]({self.url}) ({self.venue})"


PAPERS: dict[str, Paper] = {p.key: p for p in (
    Paper("HVZ23", "Y. He, R. Vershynin, Y. Zhu", "Algorithmically effective differentially private synthetic data",
          "COLT 2023", "https://proceedings.mlr.press/v195/he23a.html"),
    Paper("BSV22", "M. Boedihardjo, T. Strohmer, R. Vershynin", "Private measures, random walks, and synthetic data",
          "2022", "https://arxiv.org/abs/2204.09167"),
    Paper("DLS+24", "K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang",
          "Certified private data release for sparse Lipschitz functions", "AISTATS 2024",
          "https://arxiv.org/abs/2302.09680"),
    Paper("GFR25", "T. Gonzalez, G. Fanti, A. Ramdas", "Private Evolution converges", "2025",
          "https://arxiv.org/abs/2506.08312"),
    Paper("HSVZ23", "Y. He, T. Strohmer, R. Vershynin, Y. Zhu",
          "Differentially private low-dimensional synthetic data from high-dimensional datasets", "2023",
          "https://arxiv.org/abs/2305.17148"),
)}


@dataclass(frozen=True)
class Lesson:
    """One step of the lesson path."""

    title: str
    teaches: str
    try_this: tuple[str, ...]
    expect: tuple[str, ...]
    ask: tuple[str, ...]
    papers: tuple[str, ...] = field(default_factory=tuple)
    #: "Try this" on a table with categorical columns, when the page's ``try_this`` uses views that are drawn
    #: for numeric rows only (None: ``try_this`` holds on every table).
    mixed_try: tuple[str, ...] | None = None

    def try_on(self, mixed: bool) -> tuple[str, ...]:
        """The "Try this" items that hold on the current table (``mixed``: it has categorical columns)."""
        return self.mixed_try if mixed and self.mixed_try is not None else self.try_this


LESSONS: dict[str, Lesson] = {
    "home": Lesson(
        "What is differentially private synthetic data?",
        "Share a table without sharing the people in it: a **synthetic** table, released by a differentially "
        "private mechanism, keeps what the data say about the group and hides whether any one person is in it.",
        ("On the first screen, press **ε = 0.01**, then **ε = 10**, and compare the synthetic rows, the sentence on "
         "what is kept and the answers to the membership question.",
         "Move the sidebar's ε to 100 and look at the membership question again.",
         "Move the slider under *W1 in one picture* and watch the shaded area between the two cumulative "
         "distribution functions: that area is W1."),
        ("At ε = 0.01 the synthetic rows are far from the real ones: the averages are off by years and tens of mmHg, "
         "a category's share by tens of percentage points. At ε = 10 the averages are within a year and a few mmHg "
         "and every share within about a percentage point.",
         "The releases' answers to the membership question overlap at ε = 1 (the same counts come from the table "
         "with the patient and from the table without); at ε = 100 they separate, every release answering as its "
         "table does: a budget that large protects nobody.",
         "W1 is not 0 even with the slider at 0: ν is not μ moved sideways (its two clusters have other weights "
         "and the left one is wider), so W1 starts near 0.03. Moving ν to the right, W1 grows steadily, by about "
         "three quarters of the move: the left cluster moves by the slider's amount, the right one by half of it."),
        ("Why do the releases' answers to the membership question stop overlapping at ε = 100?",
         "Every coordinate lies in [0, 1]. Why can W1 (with the largest-coordinate distance) never exceed 1?",
         "If W1 ≤ 0.02, by how much can the average of the first coordinate differ between the real and the "
         "synthetic data? (Hint: the first coordinate is a 1-Lipschitz function of the point.)"),
    ),
    "data": Lesson(
        "The data and its public bounds",
        "Before a mechanism sees the data, someone must declare the box the values can take in principle. The "
        "bounds are public; reading them off the data would leak the extremes.",
        ("Load the bundled *iris* data and look at its bounds: [0, 10] cm for every measurement, from domain "
         "knowledge.",
         "Choose **Clinic (mixed)**: a table with numbers and categories (sex, region, diabetes). Its categories "
         "are declared like its bounds, as the choices of the clinical form, not read off the rows.",
         "Upload a CSV of your own, type the bounds each column can take in principle (and the categories of its "
         "text columns), and use it on the next pages."),
        ("The dotted box around the scatter plot is the public domain: every mechanism works inside it and moves "
         "a value outside onto its edge (clamping).",),
        ("Why would using the smallest and largest value of the data as the bounds break differential privacy?",
         "Someone types [0, 100] as the bounds of an income column. What happens to the data, and to the synthetic "
         "data?",
         "Why is the list of the categories present in a file private? (Think of a rare diagnosis.)"),
    ),
    "pmm": Lesson(
        "Private partition tree (PMM)",
        "PMM cuts the square in half again and again and adds noise to the count of every cell at every level. "
        "Coarse levels have large counts, so their noise hardly matters: the big picture stays accurate and the "
        "noise only blurs fine detail.",
        ("Move ε from 1 down to 0.1 and watch the synthetic points and W1.",
         "Under *Look closer*, open **Counts of one level** at a deep level and compare the noisy counts with the "
         "consistent ones.",
         "Open **Several releases** and draw again: each release is random, but all are close to the data.",
         "**Our own data, made private.** Press **Use the clinic table** (or load *Clinic (mixed)* on the Data "
         "page): patients with age, sex, BMI, blood pressure, region and diabetes, the categories declared with "
         "the table. PMM releases it; compare the **rows per category** of the real and the synthetic data, then "
         "open *What the release preserves* and look at the blood pressure within each region."),
        ("At smaller ε the synthetic points spread out and W1 grows, but more slowly than ε shrinks: ten times "
         "less ε (1 → 0.1) makes W1 a few times larger (about 4 to 5 times on the default data), not ten times. "
         "In 2-D the theory's rate is (εn)^(−1/2) up to logarithmic factors; *How fast W1 shrinks* measures it.",
         "At a deep level many noisy counts are negative. The consistent counts are never negative, and the two "
         "children of every cell add up to their parent.",
         "On the clinic table the first levels of the tree split the categories, then the numbers. At ε = 1 the "
         "share of every category in the synthetic data is within a few percentage points of the real one; at "
         "ε = 0.1 the gaps grow."),
        ("Why does PMM give the deep levels the larger share of ε, although their counts are smaller?",
         "What would go wrong if we released the noisy counts of only the finest level?",
         "Why does PMM split the categories before the numbers? (Two different categories are as far apart as "
         "two rows can be.)"),
        ("HVZ23",),
    ),
    "psmm": Lesson(
        "Private grid, projected (PSMM)",
        "Noisy counts on a grid, divided by n, form a signed measure: some cells get negative mass. PSMM turns it "
        "into the closest probability distribution, instead of simply clipping the negative cells.",
        ("Set ε = 0.1 and open **Projection against clipping** under *Look closer*.",
         "Compare the W1 of the two synthetic datasets below the pictures."),
        ("Clipping throws the negative mass away and inflates every positive cell, which spreads synthetic points "
         "into empty regions. The projection moves as little mass as possible: its W1 is lower.",),
        ("What does clipping do to the total mass before normalising, and why does that hurt W1?",),
        ("HVZ23",),
    ),
    "random_walk": Lesson(
        "Superregular random walk",
        "Order the cells along a path and add noise whose running sums stay small. The cumulative distribution on "
        "the path is a running sum of counts, and W1 on a line is the area between two cumulative distributions: "
        "small running sums of the noise mean small W1.",
        ("Open **Running sums of the noise** under *Look closer* and make the walk longer.",
         "Move ε and watch the synthetic cumulative distribution on the line."),
        ("The running sums of independent Laplace noise wander like the square root of the length; those of the "
         "superregular walk stay inside a band that grows only like a power of the logarithm.",),
        ("Why is the running sum, not each single noisy count, what matters for W1 on a line?",
         "The path visits neighbouring cells one after the other. Why does that make W1 on the line an upper bound "
         "for W1 in the square?"),
        ("BSV22", "DLS+24"),
    ),
    "sparse_marginals": Lesson(
        "Certified marginals",
        "Release the two-column tables (marginals) of the data with noise, fit synthetic points to them, and "
        "publish with them a certificate: a private upper bound on how far any two-column view of the synthetic "
        "data is from the real one.",
        ("Look at the certificate's three parts and the realised loss next to it.",
         "Press **Run the certificate sweep**: several releases over ε."),
        ("Every point of the sweep lies below the diagonal: the certificate is above the realised loss, as it "
         "promises with high probability, and both shrink as ε grows.",),
        ("The certificate is computed without looking at the data again. How can it bound the true loss?",),
        ("DLS+24",),
    ),
    "marginals": Lesson(
        "Marginal tables",
        "Count every column alone on a fine grid and every pair of columns on a coarse one, add noise, and fit one "
        "distribution to all these tables at once. Each record is counted in every table, in cells of many records, "
        "so the noise is small next to the counts; what no table of one or two columns sees is how three go together.",
        ("Open **Against PMM's tree** on the default data (two columns, ε = 1).",
         "Load *Clinic (mixed)* on the Data page, come back and open **Against PMM's tree** with the pair *age* and "
         "*systolic_bp*, then **The 2-way tables and the fit** for that pair.",
         "Set ε = 0.01 and open **The 1-way tables**."),
        ("On the default data PMM's tree is closer: W1 about 0.008 against 0.024, and the correlation 0.96 against "
         "0.89 (0.97 real). With two columns the 2-way table is the whole joint, but only 16 × 16 cells of it; the "
         "tree goes deeper. That is why `auto` picks PSMM for two numeric columns.",
         "On the clinic table the tables win everywhere: W1 about 0.11 against 0.16, the 1-way error 0.04 against "
         "0.14, the 2-way error 0.09 against 0.24 and even the 3-way error 0.08 against 0.12. The correlation of age "
         "and blood pressure (0.60 real) is 0.31 in the tables' release and 0.18 in PMM's: the tables keep more of "
         "it, but six coarse bins per axis flatten it inside each cell. The fitted joint is smoother than the noisy "
         "table.",
         "At ε = 0.01 the noisy counts swing by hundreds and some are negative; the released rows never are, and the "
         "fit gives few rows to bins the noise alone filled."),
        ("Every record is counted d + C(d, 2) times. Why does that not cost more privacy than one histogram of the "
         "whole space?",
         "Which question about the clinic table can the released tables not answer well, and why?",
         "Why has the fitted joint no negative cell when the noisy tables have some?"),
        ("DLS+24",),
    ),
    "private_evolution": Lesson(
        "Private Evolution",
        "Private Evolution starts from a cloud of points that knows nothing about the data and, step by step, "
        "lets the real points vote with noise for the nearest candidates; the cloud moves towards the data.",
        ("Press **Play** on the iterations picture.",
         "Switch on **Show W1 after each iteration** (owner view, computed on request).",
         "Choose the start **origin** (a single point in the corner) and watch the cloud travel to the data."),
        ("The cloud moves to the data within a few iterations and W1 drops (the W1 picture, owner view): the "
         "first iterations bring a small cloud near the data on a small share of the budget, the last one, with "
         "most of the budget and small steps, makes the release, many times closer to the data than the start. "
         "The number of iterations and the split are fixed in advance from n and ε (choosing by W1 would need "
         "the data).",),
        ("Why does Private Evolution need δ > 0 while PMM does not?",
         "What limits how close the cloud can get to the data?"),
        ("GFR25",),
        mixed_try=("Switch on **Show W1 after each iteration**, choose the start **one corner (the origin)** and "
                   "read *W1 after each iteration*: the cloud starts far from the data and W1 drops as it moves.",
                   "On a table with categorical columns, like this one, the iterations picture (with its **Play** "
                   "button) is not drawn: it draws numeric rows. Load a table of numbers on the *Data and bounds* "
                   "page to watch the cloud travel to the data."),
    ),
    "low_dim": Lesson(
        "Low-dimensional data (private PCA)",
        "In high dimension every grid becomes too fine to fill. When the data lie near a low-dimensional plane, "
        "find the plane privately first, then make the synthetic data inside it.",
        ("Use the 3-D demo (points near a plane) and compare with PMM on the full cube under *Look closer*.",
         "Raise ε and watch the angle between the private plane and the true plane shrink."),
        ("Inside the plane the mechanism works in 2 dimensions instead of 3, and beats PMM on the full cube once "
         "the private plane is accurate.",
         "The library's default plan (chosen by the defaults study) does not project when d ≤ 6: on the study's "
         "tables PSMM in full dimension was ahead of every fixed projection on average. The page uses the paper's "
         "plan to show the projection; on the 64-pixel digits the default projects once εn ≥ 250."),
        ("What is spent on finding the plane, and why can that pay off?",),
        ("HSVZ23",),
    ),
    "rates": Lesson(
        "How fast does W1 shrink?",
        "Theory says W1 shrinks like a power of εn, the effective sample size; the exponent depends on the "
        "dimension. Here you measure it.",
        ("Press **Run sweep** over n (three decades, 20 to 20 000 rows), then switch to a sweep over ε.",),
        ("On the log-log plot the mean W1 falls along a straight line; its fitted slope, read with its 95% "
         "confidence band, is close to the theoretical exponent (−1/2 in 2-D, up to logarithmic factors).",),
        ("Why does doubling ε help exactly as much as doubling n?",),
        ("HVZ23", "BSV22"),
    ),
    "compare": Lesson(
        "All mechanisms side by side",
        "The same data, the same ε and the same neighbouring relation for every mechanism: which one is closest, "
        "and at what cost in time?",
        ("Press **Run the comparison**; switch the relation where a mechanism needs the other one.",),
        ("On the default data (5,000 points, ε = 1) the tree (PMM) and the projected grid (PSMM) reach about half the "
         "flat histogram's W1, although the histogram's grid is chosen fairly by the defaults study's rule; the "
         "dashed line shows the histogram at its best grid in hindsight (owner view), and even that stays above "
         "PMM and PSMM. The walk "
         "is a little ahead of the histogram. Mechanisms that need n public run only under *replace*.",),
        ("Why can some mechanisms run only when the dataset size n is public?",),
    ),
    "audit": Lesson(
        "Checking the privacy claim",
        "Run a mechanism many times on two datasets that differ in one record and compare the outputs. If one "
        "output is much more likely on one dataset than on the other, the privacy claim is false. A finite number "
        "of runs can only show so much: the audit's **detection limit** is the largest ε̂ it could report.",
        ("Audit PMM: the lower bound ε̂ stays below the declared ε; the detection limit beside it says how high ε̂ "
         "could have gone with this many releases.",
         "Choose **a broken PMM (half the noise)** and audit again at ε = 1.",
         "Set ε = 5, then ε = 10 in the sidebar and audit the broken PMM again; read the detection limit."),
        ("At ε = 1 the broken mechanism is caught: its ε̂ (about 1.7) exceeds the ε it claims.",
         "With 1,000 releases per dataset no audit can report ε̂ above about 5 (its detection limit). At ε = 5 the "
         "audit raises its releases (to about 2,700) so that it can see above 5, and catches the broken PMM again. "
         "At ε = 10 it would need about 150,000: it says plainly that it cannot decide, instead of calling the "
         "mechanism fine."),
        ("An audit that passes does not prove privacy. What does it show, and what would?",
         "Why can 1,000 releases never show an ε̂ above about 5?"),
    ),
    "glossary": Lesson(
        "Glossary and papers",
        "The words of the lessons, and the papers the mechanisms come from.",
        (), (), (),
    ),
    "docs": Lesson(
        "The project's documentation",
        "The mathematics and the design behind the lessons, in the project's own words: what the code computes, "
        "with its formulas, and where and why it departs from a paper. Read here, without a network.",
        (), (), (),
    ),
}

#: The lesson path, in order: the navigation's pages (:data:`dashboard.registry.PAGES`) from Home to the Glossary.
ORDER: tuple[str, ...] = tuple(p.url for p in PAGES)


def step_of(url: str) -> int:
    """1-based position of a page on the lesson path."""
    return ORDER.index(url) + 1


def neighbours_of(url: str) -> tuple[str | None, str | None]:
    """The previous and next pages on the path."""
    i = ORDER.index(url)
    return (ORDER[i - 1] if i > 0 else None), (ORDER[i + 1] if i + 1 < len(ORDER) else None)

"""The small mixed table the mixed-data tests share (imported by name: pytest puts this folder on the path).

Numeric age (18-90) and bmi (15-45), categorical sex (F, M) and region (north, south, east); age depends
on sex (two clusters), bmi and region are independent of it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpsynth_core import Domain

CATS = {"sex": ["F", "M"], "region": ["north", "south", "east"]}


def mixed_domain(**kw) -> Domain:
    """The declared domain of :func:`mixed_table` (``kw``: weights, other, provenance)."""
    return Domain(lower=[18, 15], upper=[90, 45], names=["age", "bmi"], categories=CATS, **kw)


def mixed_table(n: int = 2000, seed: int = 0, *, age_sd: float = 8.0, bmi_sd: float = 4.0,
                ages: tuple[float, float] = (40.0, 60.0),
                region_p: tuple[float, float, float] = (0.5, 0.3, 0.2)) -> pd.DataFrame:
    """n rows: sex F/M with probability 0.6/0.4, age ~ N(ages[sex], age_sd) clipped, bmi ~ N(27, bmi_sd)
    clipped, region with probabilities ``region_p``."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n, p=[0.6, 0.4])
    age = np.where(sex == "F", rng.normal(ages[0], age_sd, n), rng.normal(ages[1], age_sd, n)).clip(18, 90)
    return pd.DataFrame({"age": age, "sex": sex, "bmi": rng.normal(27, bmi_sd, n).clip(15, 45),
                         "region": rng.choice(["north", "south", "east"], n, p=list(region_p))})

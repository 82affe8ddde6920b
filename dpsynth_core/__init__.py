"""dpsynth_core: differentially private synthetic data with Wasserstein-1 guarantees.

>>> from dpsynth_core import Domain, run
>>> dom = Domain(lower=[0, 0], upper=[1, 1])
>>> rel = run("pmm", X, dom, epsilon=1.0, rng=0)   # doctest: +SKIP
"""

from .domain import Domain
from .mechanisms import MECHANISMS, ClampedRowsWarning, Release, load_all, run
from .privacy import Ledger
from .theory import BoundKind

load_all()

__all__ = ["Domain", "Release", "MECHANISMS", "run", "Ledger", "ClampedRowsWarning", "BoundKind"]
__version__ = "0.1.0"

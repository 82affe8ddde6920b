"""The library stands alone: it imports and runs without the dashboard's dependencies.

``pip install dpsynth`` (no extras) installs numpy, scipy, pandas, POT, numba and pylmcf (LEMON's
network simplex, the exact sparse W1). The test builds an
environment holding exactly the distributions those requirements pull in (their dependency closure,
read from the installed metadata, linked into a fresh folder), runs a fresh interpreter with only
that folder and the repository on its path (``-S -I``: no site-packages, no user site), imports every
library module except the figure builders, runs a mechanism, W1, an export and the command line, and
checks that neither streamlit, plotly nor scikit-learn was loaded -- they are not even importable
there, so any import of them fails the test.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("streamlit", "plotly", "sklearn")


def _requirement_names(dist: md.Distribution) -> list[str]:
    """Names of a distribution's unconditional requirements (no extras, no environment markers that fail)."""
    from packaging.requirements import Requirement

    out = []
    for text in dist.requires or []:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        out.append(req.name)
    return out


def _closure(names: list[str]) -> dict[str, md.Distribution]:
    todo, seen = list(names), {}
    while todo:
        key = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if key in seen:
            continue
        dist = md.distribution(key)
        seen[key] = dist
        todo += _requirement_names(dist)
    return seen


def _core_requirements() -> list[str]:
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(r).name for r in project["dependencies"]]


def test_core_requirements_leave_out_the_app():
    names = {re.sub(r"[-_.]+", "-", n).lower() for n in _core_requirements()}
    assert names == {"numpy", "scipy", "pandas", "pot", "numba", "pylmcf"}
    closure = set(_closure(_core_requirements()))
    assert not closure & {"streamlit", "plotly", "scikit-learn"}, closure


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_library_imports_and_runs_without_the_extras(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    for dist in _closure(_core_requirements()).values():
        for f in dist.files or []:
            top = f.parts[0]
            # .dist-info is linked too: pylmcf reads its own version from its metadata at import
            if top.endswith(".data") or top == ".." or top.startswith("__"):
                continue
            src = Path(dist.locate_file(top))
            dst = site / top
            if src.exists() and not dst.exists():
                dst.symlink_to(src, target_is_directory=src.is_dir())
    script = f"""
import sys
sys.path[:0] = [{str(site)!r}, {str(ROOT)!r}]
import importlib, pkgutil
import numpy as np
import dpsynth_core, dpsynth_core.mechanisms, dpsynth_core.transport
skipped = {{"dpsynth_core.viz"}}  # the figure builders need plotly (the 'viz' extra)
for info in pkgutil.walk_packages(dpsynth_core.__path__, "dpsynth_core."):
    if info.name not in skipped:
        importlib.import_module(info.name)
from dpsynth_core import Domain, run, export
from dpsynth_core.transport import wasserstein1
X = np.random.default_rng(0).random((300, 2))
rel = run("pmm", X, Domain.unit(2), epsilon=1.0)
assert rel.synthetic.shape[1] == 2 and wasserstein1(X, rel.synthetic) >= 0 and export.report_json(rel)
assert wasserstein1(X, rel.synthetic, method="sparse", return_result=True).exact  # LEMON through pylmcf
from dpsynth_core.cli import main
assert main(["list"]) == 0
try:
    import dpsynth_core.viz
except ImportError as exc:
    assert "plotly" in str(exc), exc
else:
    raise AssertionError("plotly should not be importable in this environment")
loaded = [m for m in sys.modules if m.split(".")[0] in {FORBIDDEN!r}]
assert not loaded, loaded
print("standalone ok")
"""
    # numba's cache next to the library's sources is shared with the rest of the suite (compiling the W1 kernels
    # again here cost about 8 s of CPU): compiled code does not depend on which extras are installed
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    out = subprocess.run([sys.executable, "-S", "-I", "-c", script], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=280)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "standalone ok" in out.stdout

"""The README's library examples run as written (the section "## The library": every ```python block,
in order, in one namespace, as a reader pasting them would). The Dask examples further down write
gigabytes of Parquet and start a cluster; tests/core/test_cli_dask.py covers that path."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _library_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## The library\n")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)


def test_the_library_section_has_examples():
    blocks = _library_blocks()
    assert len(blocks) >= 3, blocks  # the first release, the mixed table, what the release preserves


@pytest.mark.timeout(300)
def test_readme_library_examples_run_and_do_what_they_say(tmp_path, monkeypatch):
    """Each block in order, in one namespace; after each, what its comments promise."""
    monkeypatch.chdir(tmp_path)
    first, mixed, report = _library_blocks()[:3]
    ns: dict = {}

    exec(compile(first, str(README), "exec"), ns)  # noqa: S102 - the README's own code
    rel = ns["rel"]
    assert isinstance(rel.synthetic, np.ndarray) and rel.synthetic.shape[1] == 2
    assert np.all((rel.synthetic >= 0) & (rel.synthetic <= 1))
    assert rel.is_dp and rel.privacy.startswith("(1, 0)-DP"), rel.privacy
    assert np.isclose(rel.ledger.to_frame()["epsilon"].sum(), 1.0)

    exec(compile(mixed, str(README), "exec"), ns)  # noqa: S102
    rel, dom = ns["rel"], ns["dom"]
    assert isinstance(rel.synthetic, pd.DataFrame) and list(rel.synthetic.columns) == list(dom.names)
    for col, labels in dom.categories.items():
        assert set(rel.synthetic[col].astype(str)) <= set(labels), col

    exec(compile(report, str(README), "exec"), ns)  # noqa: S102
    assert ns["rep"].to_frame("guarantees").shape[0] > 0
    assert ns["rep"].to_frame("downstream").shape[0] > 0

"""The oracle summary of benchmarks/bench_peers.py: the best parameter in hindsight per (table, ε) and its
ratio to the best peer. The benchmark itself (the peers' own environment, minutes of CPU) is not run here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import bench_peers as bp  # noqa: E402


def _row(method: str, value: int, rule: int, seed: int, w1: float, eps: float = 1.0) -> dict:
    param = bp.ORACLE_SPAN[method][0]
    key = bp.key(phase="oracle", table="t:4", method=method, eps=eps, seed=seed, **{param: value})
    return dict(key=key, phase="oracle", table="t:4", d=4, n=256, method=method, eps=eps, seed=seed, param=param,
                value=value, rule=rule, w1=w1)


def test_oracle_picks_the_lowest_mean_over_seeds_and_divides_by_the_best_peer():
    # n = 256, ε = 1, d = 4: the rules give PMM depth 8 and PSMM 4 cells per axis (computed at summary time)
    assert (bp.defaults.pmm_depth(256, 1.0, 4), bp.defaults.psmm_cells(256, 1.0, 4)) == (8, 4)
    rows = {}
    # PMM depth 8 (the rule): mean 0.30; depth 9: mean 0.20 (one seed lower than anything, one higher);
    # PSMM cells 3: mean 0.25, cells 4 (the rule): a single lucky seed 0.15 and a bad one 0.35 -> mean 0.25
    for r in (_row("pmm", 8, 8, 0, 0.30), _row("pmm", 8, 8, 1, 0.30), _row("pmm", 9, 8, 0, 0.10),
              _row("pmm", 9, 8, 1, 0.30), _row("psmm", 3, 4, 0, 0.25), _row("psmm", 3, 4, 1, 0.25),
              _row("psmm", 4, 4, 0, 0.15), _row("psmm", 4, 4, 1, 0.35),
              _row("pmm", 9, 8, 0, 0.01, eps=3.0)):  # another ε: must not leak into the ε = 1 cell
        rows[r["key"]] = r
    verdict = [dict(table="t:4", d=4, eps=1.0, best_peer="mst", best_peer_w1=0.16)]
    (out,) = bp.oracle_summary(rows, verdict)
    assert (out["oracle_method"], out["oracle_param"], out["oracle_value"]) == ("pmm", "depth", 9)
    assert out["oracle_w1"] == pytest.approx(0.20)
    assert out["oracle_ratio"] == pytest.approx(0.20 / 0.16)
    assert out["seeds"] == 2 and out["values_tried"] == 4
    assert out["rule_w1"] == {"pmm (depth 8)": pytest.approx(0.30), "psmm (cells 4)": pytest.approx(0.25)}


def test_oracle_skips_cells_without_runs():
    verdict = [dict(table="t:4", d=4, eps=1.0, best_peer="mst", best_peer_w1=0.16)]
    assert bp.oracle_summary({}, verdict) == []

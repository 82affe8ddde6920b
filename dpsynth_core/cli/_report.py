"""``dpsynth report REAL.csv SYNTHETIC.csv``: what a release preserves, real against synthetic.

The comparison is :func:`dpsynth_core.evaluate.report`: an OWNER VIEW, computed from the private data
without noise. The command prints a readable summary on stdout (every table of the report, the pairs
cut to the worst :data:`SHOWN_PAIRS`) and, with ``-o REPORT.json``, writes the whole report as JSON
(all or nothing, as every output of the command); ``-o -`` prints the JSON instead of the summary.
Nothing of it is a release: never publish it.
"""

from __future__ import annotations

import argparse
import os
import sys

import pandas as pd

from ..evaluate import NumericColumn, Report, report
from ._common import (
    DOMAIN_HELP,
    PROG,
    Heartbeat,
    add_domain_options,
    domain_options,
    float_arg,
    int_arg,
    read_input,
    say,
    synthetic_limits,
    write_outputs,
)

__all__ = ["add_report_parser", "cmd_report", "summary", "SHOWN_PAIRS"]

#: Pairs shown in the summary (those with the largest 2-way TV); the JSON has all of them.
SHOWN_PAIRS = 10
_OWNER = f"{PROG} report"




def add_report_parser(sub) -> None:
    """The ``report`` sub-command on the ``dpsynth`` parser's sub-parsers."""
    p = sub.add_parser("report", help="compare real and synthetic data column by column and pair by pair "
                                      "(an owner view: never publish it)",
                       description="Compare real and synthetic data: per-column distributions, means, quantiles, "
                                   "pairwise associations, 1- and 2-way marginal errors, a train-on-synthetic / "
                                   "test-on-real score, and the ceiling W1 guarantees for each statistic. Computed "
                                   "from the private data without noise: an OWNER VIEW, not differentially private.",
                       epilog=DOMAIN_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("real", metavar="REAL.csv", help="the private data the release was made from")
    p.add_argument("synthetic", metavar="SYNTHETIC.csv", help="the synthetic data (e.g. from `dpsynth synth`)")
    p.add_argument("--target", default=None,
                   help="a column to predict from the others: train on synthetic, test on real (scikit-learn)")
    p.add_argument("--holdout", default=None, metavar="HOLDOUT.csv",
                   help="real rows the release never saw, to test the --target models on (default: hold out 30%% "
                        "of REAL.csv)")
    p.add_argument("--w1", default="auto",
                   help="the W1 between the two files (unit cube, the domain's metric) for the ceilings: 'auto' "
                        "(default: computed), 'none', or a number such as `dpsynth w1` prints")
    p.add_argument("--bins", default="20", help="bins of a numeric column's histogram on its bounds (default 20)")
    p.add_argument("--pair-bins", dest="pair_bins", default="10",
                   help="bins per numeric axis of a 2-way table (default 10)")
    p.add_argument("--drop-missing", dest="drop_missing", action="store_true",
                   help="drop rows with a missing value in the columns compared")
    p.add_argument("--drop-bad-rows", dest="drop_bad_rows", action="store_true",
                   help="drop rows with a cell that is not a number, an infinite value or an undeclared category")
    p.add_argument("--seed", default="0", help="seed of the held-out split and of the models (default 0)")
    p.add_argument("-o", "--output", default=None, metavar="REPORT.json",
                   help="write the whole report as JSON ('-': print it instead of the summary)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress messages on stderr")
    # the public domain the release used: --bounds/--categories/--columns or --domain (._common)
    add_domain_options(p, columns_help="comma-separated columns (default: those of SYNTHETIC.csv)")


def _check_output(args: argparse.Namespace) -> None:
    if not args.output or args.output == "-":
        return
    for path in (args.real, args.synthetic, args.holdout):
        if path and os.path.abspath(args.output) == os.path.abspath(path):
            raise ValueError(f"The output {args.output!r} of {_OWNER} must not be one of the input files (it would "
                             f"overwrite them).")
    folder = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(folder):
        raise FileNotFoundError(2, "No such file or directory", args.output)


def _w1_arg(text: str):
    low = text.strip().lower()
    if low == "auto":
        return "auto"
    if low == "none":
        return None
    return float_arg(text, "w1", _OWNER)


def cmd_report(args: argparse.Namespace) -> int:
    _check_output(args)
    w1 = _w1_arg(args.w1)
    bins, pair_bins = int_arg(args.bins, "bins", _OWNER), int_arg(args.pair_bins, "pair_bins", _OWNER)
    seed = int_arg(args.seed, "seed", _OWNER)
    options = domain_options(args, _OWNER)
    say(args, f"reading {args.synthetic} and {args.real}")
    # the synthetic file decides the columns (the private file often has more); categorical columns are
    # those the options declare, read as text and matched against their categories
    syn, domain = read_input(args, args.synthetic, role="synthetic", owner=_OWNER, options=options,
                             **synthetic_limits())
    names = list(domain.names)
    if args.target is not None and args.target not in names:
        raise ValueError(f"--target {args.target!r} of {_OWNER} must be one of the columns read "
                         f"({', '.join(repr(c) for c in names)}): name one of them, or add it to --columns.")
    real, _ = read_input(args, args.real, role="real", owner=_OWNER, options=options, columns=names)
    holdout = None if args.holdout is None else read_input(args, args.holdout, role="holdout", owner=_OWNER,
                                                          options=options, columns=names)[0]
    with Heartbeat(args, "report") as hb:
        try:
            rep = report(real, syn, domain, target=args.target, w1=w1, holdout=holdout, bins=bins,
                         pair_bins=pair_bins, seed=seed)
        except ValueError as exc:  # the library's keywords in the command's flags
            text = str(exc).replace("out with pairs=[...]", "out of --columns").replace("pair_bins", "--pair-bins")
            raise ValueError(text.replace("evaluate.report", _OWNER)) from None
    say(args, f"report done in {hb.seconds:.2f} s (an OWNER VIEW: computed from the private data, never publish it)")
    if "certified interval" in rep.w1_source:  # said even with --quiet: the ceilings use an upper end, not W1
        print(f"{PROG} report: the W1 ceilings use the upper end of a certified interval ({rep.w1_source}): they "
              f"hold, and are looser than the exact W1's. For the exact value: `{PROG} w1 ... --method sparse` (it "
              f"may take many minutes at this size), then --w1 W with the number it prints.", file=sys.stderr)
    if rep.contradictions:
        print(f"{PROG}: warning: {len(rep.contradictions)} measured difference(s) exceed their W1 ceiling: the W1 "
              f"given is not the W1 between these two files, or there is a bug (see the notes).", file=sys.stderr)
    if args.output == "-":
        sys.stdout.write(rep.to_json())
        return 0
    if args.output:
        write_outputs([(args.output, rep.to_json())])
        say(args, f"wrote the report (owner view, JSON) to {args.output}")
    sys.stdout.write(summary(rep, real_name=args.real, synthetic_name=args.synthetic))
    return 0


def _table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "  (none)\n"
    # an undefined value (None) in a column of numbers prints as "-", like a NaN
    frame = frame.apply(lambda s: pd.to_numeric(s) if s.map(lambda v: v is None or isinstance(v, (int, float))).all()
                        else s)
    text = frame.to_string(index=False, float_format=lambda x: f"{x:.4g}", na_rep="-")
    return "".join(f"  {line}\n" for line in text.splitlines())


def _integer_section(columns: list[NumericColumn]) -> list[str]:
    """The declared whole-number columns compared as integers: the shares of whole values and, where the
    column takes few values, the value whose share differs most (the JSON has every value's share)."""
    ints = [c for c in columns if c.integer]
    if not ints:
        return []
    rows = []
    for c in ints:
        row = {"column": c.name, "real whole": c.real_whole, "synthetic whole": c.synthetic_whole}
        if c.values:
            k = int(abs(c.value_share_diffs).argmax())
            row.update({"values": f"{c.values[0]}..{c.values[-1]}", "largest share diff": float(c.value_share_diffs[k]),
                        "at": c.values[k], "real share": float(c.real_value_shares[k]),
                        "synthetic share": float(c.synthetic_value_shares[k]), "1-way TV": c.tv})
        rows.append(row)
    return ["\nInteger columns (declared whole numbers; shares of whole values, and of each value)\n",
            _table(pd.DataFrame(rows))]


def summary(rep: Report, *, real_name: str = "real", synthetic_name: str = "synthetic") -> str:
    """The report as readable text: its label first, then every table (pairs: the worst few)."""
    out = [f"{rep.label}\n\n",
           f"{real_name}: {rep.n_real} rows; {synthetic_name}: {rep.n_synthetic} rows "
           f"({rep.n_real_clamped} and {rep.n_synthetic_clamped} clamped into the bounds)\n",
           f"W1 = {rep.w1:.6g} ({rep.w1_source}; unit cube, the domain's metric)\n" if rep.w1 is not None
           else f"W1: none ({rep.w1_source})\n"]
    cols = rep.to_frame("columns")
    num = [c for c in rep.columns if isinstance(c, NumericColumn)]
    if num:
        frame = pd.DataFrame([{"column": c.name, "real mean": c.real_mean, "synthetic mean": c.synthetic_mean,
                               "real sd": c.real_std, "synthetic sd": c.synthetic_std, "W1 of column": c.w1,
                               "1-way TV": c.tv,
                               **{f"Δq{100 * lv:g}": d for lv, d in zip(c.levels, c.quantile_diffs, strict=True)}}
                              for c in num])
        out += ["\nNumeric columns (Δq: synthetic − real quantile)\n", _table(frame)]
    out += _integer_section(num)
    cat = cols[cols["kind"] == "categorical"]
    if not cat.empty:
        frame = cat[["column", "categories", "largest_share_diff", "at_category", "tv"]].rename(
            columns={"largest_share_diff": "largest share diff", "at_category": "at", "tv": "1-way TV"})
        out += ["\nCategorical columns (shares of the declared categories)\n", _table(frame)]
    if rep.pairs:
        pairs = rep.to_frame("pairs").sort_values("tv", ascending=False, kind="mergesort")
        shown = pairs.head(SHOWN_PAIRS).rename(columns={"tv": "2-way TV"})
        more = f", the {SHOWN_PAIRS} with the largest 2-way TV of {len(pairs)}" if len(pairs) > SHOWN_PAIRS else ""
        out += [f"\nPairs{more}\n", _table(shown)]
    me = rep.marginal_errors
    out.append(f"\nMarginal errors (TV on the public grid): 1-way mean {me.one_way_mean:.4g}, max {me.one_way_max:.4g} "
               f"({me.one_way_worst!r})")
    if me.two_way_max is not None:
        out.append(f"; 2-way mean {me.two_way_mean:.4g}, max {me.two_way_max:.4g} {me.two_way_worst}")
    out.append("\n")
    g = rep.to_frame("guarantees")
    if rep.w1 is not None:
        verdict = ("every measured difference is within its ceiling" if not rep.contradictions
                   else f"{len(rep.contradictions)} CONTRADICTION(S)")
        out += [f"\nWhat W1 guarantees (|synthetic − real| <= ceiling): {verdict}\n",
                _table(g[["statistic", "columns", "measured", "ceiling", "holds"]])]
    if rep.downstream is not None:
        ds = rep.downstream
        frame = rep.to_frame("downstream").pivot(index="trained_on", columns="metric", values="score")
        frame = frame.reindex(["synthetic", "real", "baseline"]).reset_index()
        out += [f"\nDownstream: predict {ds.target!r} ({ds.task}, {ds.model}); tested on {ds.n_test} real rows "
                f"({ds.test})\n", _table(frame)]
    if rep.notes:
        out += ["\nNotes\n"] + [f"  - {note}\n" for note in rep.notes]
    return "".join(out)

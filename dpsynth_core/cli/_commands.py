"""The ``dpsynth`` commands (``list``, ``synth`` with the numpy engine, ``w1``), the argument parser and
:func:`main`; ``synth --engine dask`` is :func:`._dask.synth_dask`, ``report`` is :mod:`._report`."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
from collections.abc import Sequence

from ..clamping import clamping
from ..mechanisms import MECHANISMS, load_all
from ..mechanisms.base import AUTO
from ..mechanisms.release import to_jsonable
from ..rows import WorkerError
from ..transport import W1Result, wasserstein1
from ._common import (
    CSV_SUFFIXES,
    DOMAIN_HELP,
    PARQUET_SUFFIXES,
    PROG,
    Heartbeat,
    UsageError,
    add_domain_options,
    check_not_input,
    cli_words,
    domain_options,
    float_arg,
    mechanism_for,
    one_line,
    read_input,
    row_limit,
    say,
    say_running,
    synth_settings,
    synthetic_limits,
    warn_clamping,
    write_release,
)
from ._dask import synth_dask
from ._report import add_report_parser, cmd_report

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors instead of usage + message + exit."""

    def error(self, message: str):  # noqa: D401 - argparse API
        if message.startswith("unrecognized arguments") and any(
                word.lower().endswith(PARQUET_SUFFIXES + CSV_SUFFIXES) for word in message.split()[2:]):
            message += " (a glob of files for --engine dask must be quoted, e.g. 'data/*.parquet', so that the " \
                       "shell passes it as one argument)"
        raise UsageError(message)


def _mechanism_spec(name: str):
    load_all()
    if name == AUTO:
        return None  # chosen once the domain is known (dpsynth_core.defaults.auto_mechanism)
    if name not in MECHANISMS:
        close = difflib.get_close_matches(name.lower().replace("-", "_"), list(MECHANISMS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"The 'mechanism' parameter of {PROG} synth must be one of "
                         f"{', '.join(sorted(MECHANISMS))} or {AUTO}. Got {name!r}{hint}.")
    return MECHANISMS[name]


def _cmd_list(args: argparse.Namespace) -> int:
    load_all()
    rows = [(name, spec.dp, "/".join(spec.neighbours), spec.title) for name, spec in sorted(MECHANISMS.items())]
    w = [max(len(r[i]) for r in rows + [("name", "dp", "neighbours", "")]) for i in range(3)]
    print(f"{'name':<{w[0]}}  {'dp':<{w[1]}}  {'neighbours':<{w[2]}}  title")
    for r in rows:
        print(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}")
        if args.verbose:
            spec = MECHANISMS[r[0]]
            print(f"    {spec.paper}; {spec.algorithm}")
            takes = "yes" if spec.needs_delta else "optional (pure ε-DP without it)" if spec.takes_delta else "no"
            print(f"    needs --delta: {takes}; default neighbours: "
                  f"{spec.default_neighbours}")
            print(f"    categorical columns (--categories, --domain): "
                  f"{'yes' if spec.categorical else 'no, numeric columns only'}")
            for p in spec.params:
                rng = ""
                if p.choices:
                    rng = " {" + ", ".join(map(str, p.choices)) + "}"
                elif p.low is not None or p.high is not None:
                    rng = f" [{p.low}, {p.high}]"
                print(f"    --param {p.name}=<{p.kind}>{rng} (default {p.default}): {p.help}")
    return 0


def _engine(args: argparse.Namespace) -> str:
    """The engine of ``synth``: numpy unless --engine dask or --scheduler (which implies dask)."""
    engine = args.engine or ("dask" if args.scheduler else "numpy")
    if engine == "numpy":
        if args.scheduler:
            raise UsageError("--scheduler runs on a Dask cluster: it needs --engine dask (or leave --engine out)")
        for flag, value in (("--workers", args.workers), ("--memory-limit", args.memory_limit)):
            if value is not None:
                raise UsageError(f"{flag} configures the local Dask cluster: it needs --engine dask")
    elif args.scheduler:
        for flag, value in (("--workers", args.workers), ("--memory-limit", args.memory_limit)):
            if value is not None:
                raise UsageError(f"{flag} configures the local Dask cluster that --scheduler replaces: set the "
                                 f"workers of your cluster where you start them")
    return engine


def _cmd_synth(args: argparse.Namespace) -> int:
    spec = _mechanism_spec(args.mechanism)
    engine = _engine(args)
    if engine == "dask":
        return synth_dask(args, spec)
    if not os.path.isfile(args.input) and (os.path.isdir(args.input) or any(ch in args.input for ch in "*?[")):
        raise ValueError(f"The input {args.input!r} is not a file: the numpy engine reads one CSV or Parquet file; "
                         f"for a glob or a directory use --engine dask.")
    check_not_input(args, [args.input])
    owner = f"{PROG} synth"
    options, mechanism, seed, max_rows = synth_settings(args, spec, owner)  # -m auto: mechanism None
    say(args, f"reading {args.input}")
    df, domain = read_input(args, args.input, role="input", owner=owner, options=options)
    mechanism = mechanism_for(args, mechanism, domain)
    spec = mechanism.spec
    warn_clamping(clamping(df, domain), args)  # the library's count and decision: a warning, the release goes ahead
    say_running(args, spec, mechanism, domain, seed)
    with Heartbeat(args, spec.name) as hb, row_limit(max_rows, domain.d):
        release = mechanism(df, domain, rng=seed)
    say(args, f"{spec.name} done in {hb.seconds:.2f} s: {release.privacy}")
    write_release(args, release, seed)
    return 0


def _max_seconds_arg(args: argparse.Namespace) -> float | None:
    if args.max_seconds is None:
        return None
    value = float_arg(args.max_seconds, "max-seconds", f"{PROG} w1")
    if not value > 0:
        raise ValueError(f"The 'max-seconds' parameter of {PROG} w1 must be a number of seconds > 0. Got "
                         f"{args.max_seconds!r}.")
    return value


def not_exact_note(res: W1Result, command: str = "w1") -> str:
    """What a W1 that is not exact is, in the command line's words: the proven interval, what the printed
    number is, and the flags that give the exact value (the result's advice)."""
    printed = {"interval": "its upper end (the cost of a transport plan found over every row)",
               "grid": "the grid method's estimate inside it", "sliced": "a lower bound (sliced W1)"}.get(
        res.method, "the upper end of the sparse method's bracket")
    hint = (" Options: " + "; ".join(f"{cli_words(a)}: {a.why}" for a in res.advice) + ".") if res.advice else ""
    return (f"{PROG} {command}: NOT the exact W1: W1 is certified to lie in [{res.lower:.6g}, {res.upper:.6g}] "
            f"({res.method} method), and the number printed is {printed}.{hint}")


def _cmd_w1(args: argparse.Namespace) -> int:
    owner = f"{PROG} w1"
    options = domain_options(args, owner)
    max_seconds = _max_seconds_arg(args)
    say(args, f"reading {args.b} and {args.a}")
    # the synthetic file decides the columns (a data file often has more): read it first; it may hold what
    # `dpsynth synth` writes (a noisy number of rows: a few more than the reader's limit for the data)
    B, domain = read_input(args, args.b, role="synthetic", owner=owner, options=options, **synthetic_limits())
    A, _ = read_input(args, args.a, role="data", owner=owner, options=options, columns=list(domain.names))
    with Heartbeat(args, "w1") as hb:
        try:
            res = wasserstein1(A, B, domain=domain, metric=args.metric, method=args.method, return_result=True,
                               max_seconds=max_seconds)
        except ValueError as exc:  # the library's keywords in the command's flags
            text = re.sub(r"method='(\w+)'", r"--method \1", str(exc))
            text = re.sub(r"The '(method|metric)' parameter of wasserstein1", rf"--\1 of {owner}", text)
            raise ValueError(text) from None
    metric = res.details.get("metric", args.metric)
    shown = ("mixed metric: l_inf on the numeric columns, the column's weight between two different categories"
             if metric == "mixed" else f"{metric} metric")
    say(args, f"W1 by {res.method} in {hb.seconds:.2f} s ({'exact' if res.exact else 'a certified interval'}; "
               f"unit-cube units, {shown}; computed from the private data: do not publish it)")
    if not res.exact:  # said even with --quiet: the printed number is not W1
        print(not_exact_note(res) + " --json prints the bounds.", file=sys.stderr)
    if args.json:
        figures = res.to_dict()
        figures["w1"] = figures.pop("value")
        print(json.dumps(to_jsonable({**figures, "metric": metric, "units": "unit cube",
                                      "columns": [str(c) for c in B.columns]})))
    else:
        print(repr(float(res.value)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Differentially private synthetic data with Wasserstein-1 guarantees.")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p_list = sub.add_parser("list", help="list the mechanisms")
    p_list.add_argument("-v", "--verbose", action="store_true", help="also list every mechanism's parameters")

    p_syn = sub.add_parser("synth", help="make synthetic data from a CSV or Parquet file (or many, --engine dask)",
                           epilog=DOMAIN_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p_syn.add_argument("input", metavar="IN",
                       help="private data: a CSV file with a header row, or a Parquet file; with --engine dask, a "
                            "quoted glob ('data/*.parquet'), a directory or a file of Parquet or CSV data")
    p_syn.add_argument("-o", "--output", metavar="OUT.csv", required=True, help="synthetic data (CSV; '-' for stdout)")
    p_syn.add_argument("--mechanism", "-m", required=True, help="mechanism name (see `dpsynth list`), or auto: the "
                       "one the studies found best for the table's public shape")
    p_syn.add_argument("--epsilon", "-e", required=True, help="privacy budget ε > 0")
    p_syn.add_argument("--delta", default=None, help="δ in (0, 1) for approximate-DP mechanisms")
    p_syn.add_argument("--param", "-p", action="append", metavar="KEY=VALUE",
                       help="a mechanism parameter from `dpsynth list -v` (repeatable)")
    p_syn.add_argument("--neighbours", choices=("add_remove", "replace"), default=None,
                       help="neighbouring relation (default: the mechanism's)")
    p_syn.add_argument("--n-public", dest="n_public", default=None, help="a public dataset size, if there is one")
    p_syn.add_argument("--drop-missing", dest="drop_missing", action="store_true",
                       help="drop rows with a missing value in the columns used (default: refuse the file)")
    p_syn.add_argument("--drop-bad-rows", dest="drop_bad_rows", action="store_true",
                       help="drop rows with a cell that is not a number, an infinite value or an undeclared "
                            "category (default: refuse the file); how many and where is said on stderr (a count "
                            "of your data: in no output)")
    p_syn.add_argument("--seed", default=None,
                       help="pin the randomness (tests and teaching only: the output is reproducible and NOT "
                            "private, anyone who knows the seed can undo the noise)")
    p_syn.add_argument("--report", default=None, metavar="OUT.json", help="public report (JSON)")
    p_syn.add_argument("--engine", choices=("numpy", "dask"), default=None,
                       help="numpy (default): one CSV file read into memory (at most 50 MB and 200,000 rows); dask: Parquet or CSV "
                            "files of any size, read lazily and summed partition by partition (same release)")
    p_syn.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="an existing dask.distributed scheduler, e.g. tcp://host:8786 (implies --engine dask; "
                            "the files must be readable by its workers at the same path)")
    p_syn.add_argument("--workers", default=None, metavar="N",
                       help="worker processes of the local Dask cluster (default: one per core)")
    p_syn.add_argument("--memory-limit", dest="memory_limit", default=None, metavar="SIZE",
                       help="memory limit of each local Dask worker, e.g. 2GB (default auto: this machine's memory "
                            "shared equally)")
    p_syn.add_argument("--max-rows", dest="max_rows", default=None, metavar="N",
                       help="the most synthetic rows written (default 1,000,000: a larger release is rounded to this "
                            "many points, post-processing, with a warning)")
    p_syn.add_argument("-q", "--quiet", action="store_true", help="no progress messages on stderr")
    add_domain_options(p_syn)

    p_w1 = sub.add_parser("w1", help="Wasserstein-1 distance between two CSV files (unit-cube units)",
                          epilog=DOMAIN_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p_w1.add_argument("a", metavar="DATA.csv", help="the real data (may have more columns)")
    p_w1.add_argument("b", metavar="SYNTHETIC.csv", help="the synthetic data (its columns are compared)")
    p_w1.add_argument("--metric", default="linf",
                      help="linf (default), l1 or l2; with categorical columns (--categories, a mixed --domain) the "
                           "mixed metric: l_inf on the numeric columns, 1 (or the column's weight) between two "
                           "different categories, whichever is larger (linf only)")
    p_w1.add_argument("--method", default="auto",
                      help="auto (default: exact where an exact method fits, else a certified interval), exact_1d, "
                           "pot, grid, sparse, sliced or interval; with categorical columns auto, pot, sparse (exact) "
                           "or interval")
    p_w1.add_argument("--max-seconds", dest="max_seconds", default=None, metavar="S",
                      help="with --method sparse: stop after about S seconds at a certified interval over every row")
    p_w1.add_argument("--drop-missing", dest="drop_missing", action="store_true",
                      help="drop rows with a missing value in the columns compared")
    p_w1.add_argument("--drop-bad-rows", dest="drop_bad_rows", action="store_true",
                      help="drop rows with a cell that is not a number, an infinite value or an undeclared category")
    p_w1.add_argument("--json", action="store_true", help="print value, bounds and method as JSON")
    p_w1.add_argument("-q", "--quiet", action="store_true", help="no progress messages on stderr")
    add_domain_options(p_w1, columns_help="comma-separated columns (default: those of SYNTHETIC.csv)")
    add_report_parser(sub)  # `dpsynth report`: the owner's comparison of real and synthetic data (._report)
    return parser


_COMMANDS = {"list": _cmd_list, "synth": _cmd_synth, "w1": _cmd_w1, "report": cmd_report}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpsynth`` console script; returns the exit code."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise UsageError("a command is required: list, synth, w1 or report")
        return _COMMANDS[args.command](args)
    except SystemExit as exc:  # --help
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    except UsageError as exc:
        if debug:
            raise
        print(f"{PROG}: error: {one_line(exc)} (see `{PROG} --help`)", file=sys.stderr)
        return 2
    except WorkerError as exc:  # a Dask worker failed: nothing was released, nothing written
        if debug:
            raise
        print(f"{PROG}: error: {one_line(exc)} No output was written.", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `dpsynth list -v | head`: the reader left (an OSError: so before that clause)
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 141
    except (ValueError, TypeError, OSError, KeyError, MemoryError) as exc:
        if debug:
            raise
        msg = exc.strerror + f": {exc.filename!r}" if isinstance(exc, OSError) and exc.strerror and exc.filename \
            else str(exc)
        print(f"{PROG}: error: {one_line(msg) or type(exc).__name__}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: still one line, the traceback with --debug
        if debug:
            raise
        print(f"{PROG}: internal error: {type(exc).__name__}: {one_line(exc)} (rerun with --debug for the "
              f"traceback)", file=sys.stderr)
        return 1

"""The ``dpsynth`` command: differentially private synthetic data from a CSV file.

::

    dpsynth list [-v]
    dpsynth synth --mechanism NAME --epsilon E [--delta D] --bounds "lo:hi,lo:hi" [--param key=value ...]
                  [--neighbours R] [--n-public N] [--columns a,b] [--drop-missing] [--seed S]
                  IN.csv -o OUT.csv [--report OUT.json]
    dpsynth w1 DATA.csv SYNTHETIC.csv --bounds "lo:hi,..." [--columns a,b] [--metric linf] [--method auto] [--json]

Parameters of ``--param`` come from the registry schema (:class:`~dpsynth_core.schema.ParamSpec`);
the mechanism is bound once with :func:`~dpsynth_core.mechanisms.bind`. Bounds are public inputs:
they are never derived from the data. The synthetic CSV lists its rows in random order; the report
(``--report``) is :func:`dpsynth_core.export.public_report`, so it contains only differentially
private values. Without ``--seed`` the noise comes from fresh operating-system entropy; with it the
run is reproducible and its report is labelled "reproducible, not private". Files are read by
:func:`dpsynth_core.tabular.read_table` (separator and decimal comma detected, bad cells reported by
row and column, never a silent misread). Nothing of the input is printed, except a warning, for the
data owner's eyes, when the bounds clamp more than a small share of the rows. Errors are one line on
stderr with exit code 2 (usage) or 1 (invalid data or parameters); ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import json
import math
import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["main", "build_parser"]

_PROG = "dpsynth"
#: Share of rows clamped by --bounds above which the command warns (owner's eyes only).
CLAMP_WARNING_SHARE = 0.01


class _UsageError(Exception):
    """A command-line usage error (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors instead of usage + message + exit."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise _UsageError(message)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _say(args: argparse.Namespace, text: str) -> None:
    if not getattr(args, "quiet", False):
        print(f"{_PROG}: {text}", file=sys.stderr, flush=True)


class _Heartbeat:
    """Prints "still running" on stderr every ``interval`` seconds while a long step runs."""

    def __init__(self, args: argparse.Namespace, what: str, interval: float = 5.0):
        self.args, self.what, self.interval = args, what, interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0

    def __enter__(self):
        self._t0 = time.perf_counter()
        if not getattr(self.args, "quiet", False):
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            _say(self.args, f"{self.what}: still running ({time.perf_counter() - self._t0:.0f} s)")

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self._t0


# ------------------------------------------------------------------------------------ parsing
def _float_arg(text: str, name: str, owner: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        raise ValueError(f"The '{name}' parameter of {owner} must be a float. Got {text!r}.") from None


def _int_arg(text: str, name: str, owner: str) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise ValueError(f"The '{name}' parameter of {owner} must be an int. Got {text!r}.") from None


def _columns_arg(text: str | None) -> list[str] | None:
    if text is None:
        return None
    cols = [c.strip() for c in text.split(",")]
    if not all(cols):
        raise ValueError(f"The 'columns' parameter of {_PROG} must be a comma-separated list of column names. "
                         f"Got {text!r}.")
    return cols


def _domain(bounds: str, names: Sequence[str], owner: str):
    """The public :class:`Domain` from ``--bounds`` ("lo:hi" per column, or one for all)."""
    from .domain import Domain

    expected = f"'lo:hi' per column ({len(names)} column(s): {', '.join(names[:8])}{', ...' if len(names) > 8 else ''})" \
               " or a single 'lo:hi' for all, with finite numbers and lo < hi, e.g. 0:120"
    parts = bounds.split(",") if isinstance(bounds, str) else []
    if len(parts) not in (1, len(names)):
        raise ValueError(f"The 'bounds' parameter of {owner} must give one {expected}. Got {len(parts)} range(s).")
    if len(parts) == 1:
        parts = parts * len(names)
    lows, highs = [], []
    for name, part in zip(names, parts, strict=True):
        lo, sep, hi = part.partition(":")
        try:
            lo_f, hi_f = float(lo), float(hi)
        except ValueError:
            lo_f = hi_f = math.nan
        if not sep or not (math.isfinite(lo_f) and math.isfinite(hi_f)):
            raise ValueError(f"The 'bounds' parameter of {owner} must give {expected}. Got {part.strip()!r} for "
                             f"column {name!r}.")
        if not lo_f < hi_f:
            raise ValueError(f"The 'bounds' parameter of {owner} must give each column a lower bound below its "
                             f"upper bound. Got {part.strip()!r} for column {name!r}.")
        lows.append(lo_f)
        highs.append(hi_f)
    return Domain(lows, highs, names=tuple(names))


def _load(args: argparse.Namespace, path: str, columns: list[str] | None, role: str):
    """Read a CSV with the project's rules; the notes (text columns left out, dropped rows, the
    separator found) go to stderr."""
    from .tabular import CSVError, read_table

    try:
        table = read_table(path, columns=columns, missing="drop" if getattr(args, "drop_missing", False) else "error",
                           what=f"the {role} file {path!r}")
    except CSVError as exc:
        if exc.kind == "missing" and hasattr(args, "drop_missing"):
            raise CSVError(f"{exc} (add --drop-missing to drop them)", exc.kind, row=exc.row, column=exc.column,
                           count=exc.count) from None
        raise
    # progress lines never carry a count of the private rows; dropped rows are a warning for the owner
    for note in table.notes:
        if note.startswith("Dropped "):
            print(f"{_PROG}: warning: {path}: {note} (owner view: not in any output)", file=sys.stderr, flush=True)
        elif not note.startswith("Read "):
            _say(args, f"{path}: {note}")
    _say(args, f"{path}: using column(s) {', '.join(repr(c) for c in table.numeric)}")
    return table.frame


def _warn_clamping(args: argparse.Namespace, X, domain, path: str) -> None:
    """Warn (owner's eyes only, never in an output) when the bounds clamp more than 1% of the rows."""
    arr = X.to_numpy(dtype=float)
    below = (arr < domain.lower_array).sum(axis=0)
    above = (arr > domain.upper_array).sum(axis=0)
    rows = int(np.any((arr < domain.lower_array) | (arr > domain.upper_array), axis=1).sum())
    if rows <= CLAMP_WARNING_SHARE * arr.shape[0]:
        return
    worst = [f"{name!r} ({int(b)} below, {int(a)} above)" for name, b, a in zip(domain.names, below, above, strict=True)
             if a + b]
    print(f"{_PROG}: warning: {rows} of {arr.shape[0]} rows of {path} are outside the bounds and will be clamped "
          f"into them: {', '.join(worst[:4])}{' ...' if len(worst) > 4 else ''}. Check --bounds: they should be the "
          f"range the values can take in principle. (Owner view: computed from your data; not in any output.)",
          file=sys.stderr, flush=True)


def _mechanism_spec(name: str):
    from .mechanisms import MECHANISMS, load_all

    load_all()
    if name not in MECHANISMS:
        close = difflib.get_close_matches(name, list(MECHANISMS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"The 'mechanism' parameter of {_PROG} synth must be one of "
                         f"{', '.join(sorted(MECHANISMS))}. Got {name!r}{hint}.")
    return MECHANISMS[name]


def _bind(spec, args: argparse.Namespace):
    """The mechanism bound to the command line's ε, δ, relation, n_public and --param values."""
    from .mechanisms import bind

    owner = spec.name
    epsilon = _float_arg(args.epsilon, "epsilon", owner)
    if args.delta is not None and not spec.needs_delta:
        raise ValueError(f"The 'delta' parameter of {owner} is not used: {owner} is pure ε-DP. Got {args.delta!r}.")
    if args.delta is None and spec.needs_delta:
        raise ValueError(f"The 'delta' parameter of {owner} must be given (--delta): it is approximate "
                         f"(ε, δ)-DP. Got none.")
    delta = None if args.delta is None else _float_arg(args.delta, "delta", owner)
    names = [p.name for p in spec.params]
    params: dict[str, Any] = {}
    for item in args.param or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"The 'param' parameter of {_PROG} synth must be key=value. Got {item!r}.")
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1)
            raise ValueError(f"The 'param' parameter of {_PROG} synth must name a parameter of {owner} "
                             f"({', '.join(names) if names else 'it has none'}). Got {key!r}"
                             f"{f' (did you mean {close[0]!r}?)' if close else ''}.")
        if key in params:
            raise ValueError(f"The 'param' parameter of {_PROG} synth must give {key!r} once. Got it twice.")
        params[key] = spec.param(key).parse(value.strip(), owner)
    n_public = None
    if args.n_public is not None:
        accepted = set(inspect.signature(spec.func).parameters)
        if "n_public" not in accepted:
            raise ValueError(f"The 'n_public' parameter of {owner} is not accepted by this mechanism. "
                             f"Got {args.n_public!r}.")
        if "n_public" in params:
            raise ValueError(f"The 'n_public' parameter of {owner} must be given once (--n-public or --param). "
                             f"Got it twice.")
        n_public = _int_arg(args.n_public, "n_public", owner)
    return bind(owner, epsilon=epsilon, delta=delta, neighbours=args.neighbours, n_public=n_public, params=params)


def _seed(args: argparse.Namespace) -> int | None:
    if args.seed is None:
        return None
    seed = _int_arg(args.seed, "seed", _PROG)
    if seed < 0:
        raise ValueError(f"The 'seed' parameter of {_PROG} must be an int in [0, inf). Got {seed}.")
    return seed


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except OSError:
        return False


def _write_text(path: str, data: str | bytes) -> None:
    if path == "-":
        out = sys.stdout.buffer if isinstance(data, bytes) else sys.stdout
        out.write(data)
        out.flush()
        return
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode, **({} if isinstance(data, bytes) else {"encoding": "utf-8"})) as fh:
        fh.write(data)


# ----------------------------------------------------------------------------------- commands
def _cmd_list(args: argparse.Namespace) -> int:
    from .mechanisms import MECHANISMS, load_all

    load_all()
    rows = [(name, spec.dp, "/".join(spec.neighbours), spec.title) for name, spec in sorted(MECHANISMS.items())]
    w = [max(len(r[i]) for r in rows + [("name", "dp", "neighbours", "")]) for i in range(3)]
    print(f"{'name':<{w[0]}}  {'dp':<{w[1]}}  {'neighbours':<{w[2]}}  title")
    for r in rows:
        print(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}")
        if args.verbose:
            spec = MECHANISMS[r[0]]
            print(f"    {spec.paper}; {spec.algorithm}")
            print(f"    needs --delta: {'yes' if spec.needs_delta else 'no'}; default neighbours: "
                  f"{spec.default_neighbours}")
            for p in spec.params:
                rng = ""
                if p.choices:
                    rng = " {" + ", ".join(map(str, p.choices)) + "}"
                elif p.low is not None or p.high is not None:
                    rng = f" [{p.low}, {p.high}]"
                print(f"    --param {p.name}=<{p.kind}>{rng} (default {p.default}): {p.help}")
    return 0


def _cmd_synth(args: argparse.Namespace) -> int:
    from .export import report_json, synthetic_csv

    spec = _mechanism_spec(args.mechanism)
    for out in (args.output, args.report):
        if out and out != "-" and (_same_file(out, args.input) or os.path.abspath(out) == os.path.abspath(args.input)):
            raise ValueError(f"The output {out!r} of {_PROG} synth must not be the input file (it would overwrite "
                             f"the private data).")
    mechanism = _bind(spec, args)
    seed = _seed(args)
    columns = _columns_arg(args.columns)
    _say(args, f"reading {args.input}")
    df = _load(args, args.input, columns, "input")
    domain = _domain(args.bounds, [str(c) for c in df.columns], f"{_PROG} synth")
    _warn_clamping(args, df, domain, args.input)
    what = f"{spec.name} (ε = {mechanism.epsilon:g}, {mechanism.neighbours} neighbours)"
    _say(args, f"running {what} on {domain.d} column(s)")
    if seed is not None:
        _say(args, f"--seed {seed}: the output is reproducible and NOT private (anyone who knows the seed can "
                   "undo the noise); leave --seed out for a private release")
    with _Heartbeat(args, spec.name) as hb:
        release = mechanism(df, domain, rng=seed)
    _say(args, f"{spec.name} done in {hb.seconds:.2f} s: {release.privacy}")
    _write_text(args.output, synthetic_csv(release, rng=seed))
    _say(args, f"wrote {release.synthetic.shape[0]} synthetic rows to {args.output} (in random order)")
    if args.report:
        _write_text(args.report, report_json(release))
        _say(args, f"wrote the report (public values only) to {args.report}")
    return 0


def _cmd_w1(args: argparse.Namespace) -> int:
    from .mechanisms.base import to_jsonable
    from .transport import wasserstein1

    columns = _columns_arg(args.columns)
    _say(args, f"reading {args.b} and {args.a}")
    # the synthetic file decides the columns (a data file often has more): read it first
    B = _load(args, args.b, columns, "synthetic")
    A = _load(args, args.a, [str(c) for c in B.columns], "data")
    domain = _domain(args.bounds, [str(c) for c in B.columns], f"{_PROG} w1")
    with _Heartbeat(args, "w1") as hb:
        res = wasserstein1(A, B, domain=domain, metric=args.metric, method=args.method, return_result=True)
    _say(args, f"W1 by {res.method} in {hb.seconds:.2f} s ({'exact' if res.exact else 'a certified interval'}; "
               f"unit-cube units, {args.metric} metric; computed from the private data: do not publish it)")
    if args.json:
        figures = res.to_dict()
        figures["w1"] = figures.pop("value")
        print(json.dumps(to_jsonable({**figures, "metric": args.metric, "units": "unit cube",
                                      "columns": [str(c) for c in B.columns]})))
    else:
        print(repr(float(res.value)))
    return 0


# ------------------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=_PROG, description="Differentially private synthetic data with Wasserstein-1 guarantees.")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p_list = sub.add_parser("list", help="list the mechanisms")
    p_list.add_argument("-v", "--verbose", action="store_true", help="also list every mechanism's parameters")

    p_syn = sub.add_parser("synth", help="make synthetic data from a CSV file")
    p_syn.add_argument("input", metavar="IN.csv", help="private data: CSV with a header row, numeric columns")
    p_syn.add_argument("-o", "--output", metavar="OUT.csv", required=True, help="synthetic data (CSV; '-' for stdout)")
    p_syn.add_argument("--mechanism", "-m", required=True, help="mechanism name (see `dpsynth list`)")
    p_syn.add_argument("--epsilon", "-e", required=True, help="privacy budget ε > 0")
    p_syn.add_argument("--delta", default=None, help="δ in (0, 1) for approximate-DP mechanisms")
    p_syn.add_argument("--bounds", "-b", required=True,
                       help="public bounds 'lo:hi,lo:hi,...' (one per column, or one for all); never from the data")
    p_syn.add_argument("--param", "-p", action="append", metavar="KEY=VALUE",
                       help="a mechanism parameter from `dpsynth list -v` (repeatable)")
    p_syn.add_argument("--neighbours", choices=("add_remove", "replace"), default=None,
                       help="neighbouring relation (default: the mechanism's)")
    p_syn.add_argument("--n-public", dest="n_public", default=None, help="a public dataset size, if there is one")
    p_syn.add_argument("--columns", default=None, help="comma-separated columns to use (default: all numeric)")
    p_syn.add_argument("--drop-missing", dest="drop_missing", action="store_true",
                       help="drop rows with a missing value in the columns used (default: refuse the file)")
    p_syn.add_argument("--seed", default=None,
                       help="pin the randomness (tests and teaching only: the output is reproducible and NOT "
                            "private, anyone who knows the seed can undo the noise)")
    p_syn.add_argument("--report", default=None, metavar="OUT.json", help="public report (JSON)")
    p_syn.add_argument("-q", "--quiet", action="store_true", help="no progress messages on stderr")

    p_w1 = sub.add_parser("w1", help="Wasserstein-1 distance between two CSV files (unit-cube units)")
    p_w1.add_argument("a", metavar="DATA.csv", help="the real data (may have more columns)")
    p_w1.add_argument("b", metavar="SYNTHETIC.csv", help="the synthetic data (its columns are compared)")
    p_w1.add_argument("--bounds", "-b", required=True, help="public bounds 'lo:hi,...' mapping both files to the unit cube")
    p_w1.add_argument("--metric", default="linf", help="linf (default), l1 or l2")
    p_w1.add_argument("--method", default="auto", help="auto (default), exact_1d, pot, grid, sparse or sliced")
    p_w1.add_argument("--columns", default=None, help="comma-separated columns (default: those of SYNTHETIC.csv)")
    p_w1.add_argument("--drop-missing", dest="drop_missing", action="store_true",
                      help="drop rows with a missing value in the columns compared")
    p_w1.add_argument("--json", action="store_true", help="print value, bounds and method as JSON")
    p_w1.add_argument("-q", "--quiet", action="store_true", help="no progress messages on stderr")
    return parser


_COMMANDS = {"list": _cmd_list, "synth": _cmd_synth, "w1": _cmd_w1}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpsynth`` console script; returns the exit code."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise _UsageError("a command is required: list, synth or w1")
        return _COMMANDS[args.command](args)
    except SystemExit as exc:  # --help
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    except _UsageError as exc:
        if debug:
            raise
        print(f"{_PROG}: error: {_one_line(exc)} (see `{_PROG} --help`)", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, KeyError, MemoryError) as exc:
        if debug:
            raise
        msg = exc.strerror + f": {exc.filename!r}" if isinstance(exc, OSError) and exc.strerror and exc.filename \
            else str(exc)
        print(f"{_PROG}: error: {_one_line(msg) or type(exc).__name__}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `dpsynth list -v | head`: the reader left, nothing to report
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 141
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: still one line, the traceback with --debug
        if debug:
            raise
        print(f"{_PROG}: internal error: {type(exc).__name__}: {_one_line(exc)} (rerun with --debug for the "
              f"traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

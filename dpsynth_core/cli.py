"""The ``dpsynth`` command: differentially private synthetic data from a CSV file.

::

    dpsynth list [-v]
    dpsynth synth --mechanism NAME --epsilon E [--delta D] --bounds "lo:hi,lo:hi" [--param key=value ...]
                  [--neighbours R] [--n-public N] [--columns a,b] [--seed S] IN.csv -o OUT.csv [--report OUT.json]
    dpsynth w1 A.csv B.csv --bounds "lo:hi,..." [--metric linf] [--method auto] [--json]

Parameters of ``--param`` come from the registry schema (:class:`~dpsynth_core.mechanisms.base.ParamSpec`).
Bounds are public inputs: they are never derived from the data. The report (``--report``) is
:meth:`Release.public` without the synthetic rows, so it contains only differentially private
values; nothing of the input (not even its number of rows) is printed. Errors are one line on
stderr with exit code 2 (usage) or 1 (invalid data or parameters); ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "build_parser"]

_PROG = "dpsynth"


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
    from .domain import Domain

    parts = bounds.split(",") if isinstance(bounds, str) else []
    if len(parts) not in (1, len(names)):
        raise ValueError(
            f"The 'bounds' parameter of {owner} must give one 'lo:hi' per column ({len(names)} column(s): "
            f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''}) or a single 'lo:hi' for all. "
            f"Got {len(parts)}."
        )
    return Domain.parse(bounds, list(names))


def _load(path: str, columns: list[str] | None):
    from .datasets import load_csv

    return load_csv(path, columns=columns)


def _mechanism_spec(name: str):
    from .mechanisms import MECHANISMS, load_all

    load_all()
    if name not in MECHANISMS:
        raise ValueError(f"The 'mechanism' parameter of {_PROG} synth must be one of "
                         f"{', '.join(sorted(MECHANISMS))}. Got {name!r}.")
    return MECHANISMS[name]


def _mechanism_kwargs(spec, args: argparse.Namespace) -> dict[str, Any]:
    owner = spec.name
    accepted = set(inspect.signature(spec.func).parameters)
    kwargs: dict[str, Any] = {"epsilon": _float_arg(args.epsilon, "epsilon", owner)}
    if args.delta is not None:
        if "delta" not in accepted:
            raise ValueError(f"The 'delta' parameter of {owner} is not used: {owner} is pure ε-DP. "
                             f"Got {args.delta!r}.")
        kwargs["delta"] = _float_arg(args.delta, "delta", owner)
    elif spec.needs_delta:
        raise ValueError(f"The 'delta' parameter of {owner} must be given (--delta): it is approximate "
                         f"(ε, δ)-DP. Got none.")
    kwargs["neighbours"] = args.neighbours if args.neighbours is not None else spec.default_neighbours
    names = [p.name for p in spec.params]
    for item in args.param or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"The 'param' parameter of {_PROG} synth must be key=value. Got {item!r}.")
        if key not in names:
            raise ValueError(f"The 'param' parameter of {_PROG} synth must name a parameter of {owner} "
                             f"({', '.join(names) if names else 'it has none'}). Got {key!r}.")
        if key in kwargs:
            raise ValueError(f"The 'param' parameter of {_PROG} synth must give {key!r} once. Got it twice.")
        kwargs[key] = spec.param(key).parse(value.strip(), owner)
    if args.n_public is not None:
        if "n_public" not in accepted:
            raise ValueError(f"The 'n_public' parameter of {owner} is not accepted by this mechanism. "
                             f"Got {args.n_public!r}.")
        if "n_public" in kwargs:
            raise ValueError(f"The 'n_public' parameter of {owner} must be given once (--n-public or --param). "
                             f"Got it twice.")
        kwargs["n_public"] = _int_arg(args.n_public, "n_public", owner)
    if args.seed is not None:
        seed = _int_arg(args.seed, "seed", _PROG)
        if seed < 0:
            raise ValueError(f"The 'seed' parameter of {_PROG} must be an int in [0, inf). Got {seed}.")
        kwargs["rng"] = seed
    return kwargs


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
    spec = _mechanism_spec(args.mechanism)
    for out in (args.output, args.report):
        if out and out != "-" and (_same_file(out, args.input) or os.path.abspath(out) == os.path.abspath(args.input)):
            raise ValueError(f"The output {out!r} of {_PROG} synth must not be the input file (it would overwrite "
                             f"the private data).")
    kwargs = _mechanism_kwargs(spec, args)
    columns = _columns_arg(args.columns)
    _say(args, f"reading {args.input}")
    df = _load(args.input, columns)
    domain = _domain(args.bounds, [str(c) for c in df.columns], f"{_PROG} synth")
    what = f"{spec.name} (ε = {kwargs['epsilon']:g}, {kwargs['neighbours']} neighbours)"
    _say(args, f"running {what} on {domain.d} column(s)")
    from .datasets import csv_bytes
    from .mechanisms import run

    with _Heartbeat(args, spec.name) as hb:
        release = run(spec.name, df, domain, **kwargs)
    _say(args, f"{spec.name} done in {hb.seconds:.2f} s: {release.privacy}")
    _write_text(args.output, csv_bytes(release.synthetic, list(domain.names)))
    _say(args, f"wrote {release.synthetic.shape[0]} synthetic rows to {args.output}")
    if args.report:
        _write_text(args.report, json.dumps(_public_report(release), indent=2) + "\n")
        _say(args, f"wrote the report (public values only) to {args.report}")
    return 0


def _public_report(release) -> dict:
    """The report: :meth:`Release.public` without the synthetic rows, nothing else."""
    from .mechanisms.base import to_jsonable

    return to_jsonable(release.public(include_synthetic=False))


def _cmd_w1(args: argparse.Namespace) -> int:
    from .transport import wasserstein1

    columns = _columns_arg(args.columns)
    _say(args, f"reading {args.a} and {args.b}")
    A = _load(args.a, columns)
    B = _load(args.b, [str(c) for c in A.columns])
    domain = _domain(args.bounds, [str(c) for c in A.columns], f"{_PROG} w1")
    with _Heartbeat(args, "w1") as hb:
        res = wasserstein1(A, B, domain=domain, metric=args.metric, method=args.method, return_result=True)
    _say(args, f"W1 by {res.method} in {hb.seconds:.2f} s ({'exact' if res.exact else 'approximate'}; "
               f"unit-cube units, {args.metric} metric)")
    if args.json:
        from .mechanisms.base import to_jsonable

        print(json.dumps(to_jsonable({"w1": res.value, "lower": res.lower, "upper": res.upper, "method": res.method,
                                      "exact": res.exact, "certified": res.certified, "metric": args.metric,
                                      "units": "unit cube"})))
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
    p_syn.add_argument("--seed", default=None,
                       help="random seed (for tests only: anyone who knows the seed can undo the noise)")
    p_syn.add_argument("--report", default=None, metavar="OUT.json", help="public report (JSON)")
    p_syn.add_argument("-q", "--quiet", action="store_true", help="no progress messages on stderr")

    p_w1 = sub.add_parser("w1", help="Wasserstein-1 distance between two CSV files (unit-cube units)")
    p_w1.add_argument("a", metavar="A.csv")
    p_w1.add_argument("b", metavar="B.csv")
    p_w1.add_argument("--bounds", "-b", required=True, help="public bounds 'lo:hi,...' mapping both files to the unit cube")
    p_w1.add_argument("--metric", default="linf", help="linf (default), l1 or l2")
    p_w1.add_argument("--method", default="auto", help="auto (default), exact_1d, pot, grid, sparse or sliced")
    p_w1.add_argument("--columns", default=None, help="comma-separated columns (default: all numeric of A)")
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

"""What both engines of the ``dpsynth`` command share: messages on stderr, the heartbeat, the parsing of
the arguments (bounds, mechanism, seed) and the all-or-nothing writing of the outputs.

The public domain's options, for every command that reads a table (``synth``, ``w1``, and any new one):
:func:`add_domain_options` adds ``--bounds``, ``--categories``, ``--domain`` and ``--columns`` to a
parser (their rules are :data:`DOMAIN_HELP`, shown by ``--help``); :func:`domain_options` checks them
before any file is read; :func:`read_input` reads one CSV or Parquet file with the declared categories
and returns the frame and its :class:`~dpsynth_core.Domain`; :func:`domain_from_args` builds the
domain for columns read otherwise (the dask engine).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import errno
import inspect
import math
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import limits
from ..clamping import CLAMP_WARNING_SHARE, Clamping
from ..domain import Domain, check_categories
from ..domain_file import DOMAIN_FILE_MAX_BYTES, DomainFileError, read_domain
from ..export import report_json, synthetic_csv
from ..mechanisms import MECHANISMS, bind
from ..mechanisms.base import AUTO, bind_auto
from ..privacy import check_epsilon, weak_epsilon_note
from ..tabular import MAX_BYTES, MAX_ROWS, PARQUET_SUFFIXES, CSVError, read_parquet, read_table
from ..validation import Advice

__all__ = ["PROG", "CLAMP_WARNING_SHARE", "HEARTBEAT_SECONDS", "PARQUET_SUFFIXES", "CSV_SUFFIXES", "UsageError",
           "one_line", "say", "Heartbeat", "float_arg", "int_arg", "columns_arg", "domain_from_bounds",
           "bind_mechanism", "check_auto_args", "bind_auto_mechanism", "seed_arg", "max_rows_arg", "row_limit", "write_outputs", "check_not_input", "say_running", "write_release",
           "DOMAIN_HELP", "DOMAIN_FILE_MAX_BYTES", "DomainOptions", "add_domain_options", "domain_options",
           "read_domain_file", "domain_from_args", "read_input", "check_takes_categories", "CLI_OPTIONS", "cli_words",
           "warn", "warn_clamping", "warn_weak_epsilon", "synthetic_limits"]

#: The command's name, at the start of every line it prints on stderr.
PROG = "dpsynth"
#: Seconds between two "still running" lines on stderr.
HEARTBEAT_SECONDS = 5.0
#: File names read as CSV (and as Parquet: :data:`dpsynth_core.tabular.PARQUET_SUFFIXES`).
CSV_SUFFIXES = (".csv",)


class UsageError(Exception):
    """A command-line usage error (exit code 2)."""


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def say(args: argparse.Namespace, text: str) -> None:
    if not getattr(args, "quiet", False):
        print(f"{PROG}: {text}", file=sys.stderr, flush=True)


def warn(text: str) -> None:
    """A warning on stderr, said even with --quiet."""
    print(f"{PROG}: warning: {text}", file=sys.stderr, flush=True)


#: The command line's words for the library's options (:class:`~dpsynth_core.validation.Advice`): a result
#: or an error that advises an option is worded here, never with the library's keyword.
CLI_OPTIONS = {"method": "--method", "max_seconds": "--max-seconds", "drop_bad_rows": "--drop-bad-rows",
               "missing": "--drop-missing", "bounds": "--bounds", "epsilon": "--epsilon", "w1": "--w1",
               "integers": "--integers"}


#: What a flag that takes a value shows when the advice leaves the value to the user.
_PLACEHOLDERS = {"max_seconds": "S", "epsilon": "E"}


def cli_words(advice: Advice) -> str:
    """One piece of advice as the command line says it, e.g. "--method sparse", "--max-seconds S" or
    "--drop-bad-rows"."""
    flag = CLI_OPTIONS.get(advice.param, f"--{advice.param.replace('_', '-')}")
    if advice.param == "missing" or advice.value is True:
        return flag
    value = _PLACEHOLDERS.get(advice.param) if advice.value is None else advice.value
    return flag if value is None else f"{flag} {value}"


def warn_clamping(c: Clamping | None, args: argparse.Namespace) -> None:
    """The library's clamping warning (:mod:`dpsynth_core.clamping`: one decision and count for every front
    end; the release goes ahead), in the command line's words."""
    if c is not None and c.warns:
        where = "the bounds in the domain file (--domain)" if getattr(args, "domain", None) else "--bounds"
        warn(c.message(where))


def warn_weak_epsilon(epsilon: float) -> None:
    """The library's note for an ε that gives no meaningful protection, with the flag to change."""
    note = weak_epsilon_note(epsilon)
    if note is not None:
        warn(note.replace("Choose ε of at most", "Give --epsilon of at most"))


class Heartbeat:
    """Prints "still running" on stderr every ``interval`` seconds while a long step runs.

    ``progress``, when given, returns a short text appended to each line (the dask engine's count of
    finished Dask tasks), or "" when it has nothing to say."""

    def __init__(self, args: argparse.Namespace, what: str, interval: float | None = None,
                 progress: Callable[[], str] | None = None):
        self.args, self.what = args, what
        self.interval = HEARTBEAT_SECONDS if interval is None else interval
        self.progress = progress
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
            extra = self.progress() if self.progress is not None else ""
            say(self.args, f"{self.what}: still running ({time.perf_counter() - self._t0:.0f} s"
                            f"{'; ' + extra if extra else ''})")

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self._t0


def float_arg(text: str, name: str, owner: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        raise ValueError(f"The '{name}' parameter of {owner} must be a float. Got {text!r}.") from None


def int_arg(text: str, name: str, owner: str) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise ValueError(f"The '{name}' parameter of {owner} must be an int. Got {text!r}.") from None


def columns_arg(text: str | None, name: str = "columns") -> list[str] | None:
    if text is None:
        return None
    cols = [c.strip() for c in text.split(",")]
    if not all(cols):
        raise ValueError(f"The '{name}' parameter of {PROG} must be a comma-separated list of column names. "
                         f"Got {text!r}.")
    return cols


def domain_from_bounds(bounds: str, names: Sequence[str], owner: str, *, word: str = "column"):
    """The public :class:`Domain` from ``--bounds`` ("lo:hi" per column, or one for all); ``word`` names
    the columns in messages ("numeric column" when the table also has categorical ones)."""
    expected = f"'lo:hi' per {word} ({len(names)} {word}(s): {', '.join(names[:8])}{', ...' if len(names) > 8 else ''})" \
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


def bind_mechanism(spec, args: argparse.Namespace):
    """The mechanism bound to the command line's ε, δ, relation, n_public and --param values."""
    owner = spec.name
    # ε and the parameters are checked here, before any data is read (the mechanism checks them again)
    epsilon = check_epsilon(float_arg(args.epsilon, "epsilon", owner), owner)
    if args.delta is not None and not spec.takes_delta:
        raise ValueError(f"The 'delta' parameter of {owner} is not used: {owner} is pure ε-DP. Got {args.delta!r}.")
    if args.delta is None and spec.needs_delta:
        raise ValueError(f"The 'delta' parameter of {owner} must be given (--delta): it is approximate "
                         f"(ε, δ)-DP. Got none.")
    delta = None if args.delta is None else float_arg(args.delta, "delta", owner)
    names = [p.name for p in spec.params]
    params: dict[str, Any] = {}
    for item in args.param or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"The 'param' parameter of {PROG} synth must be key=value. Got {item!r}.")
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1)
            raise ValueError(f"The 'param' parameter of {PROG} synth must name a parameter of {owner} "
                             f"({', '.join(names) if names else 'it has none'}). Got {key!r}"
                             f"{f' (did you mean {close[0]!r}?)' if close else ''}.")
        if key in params:
            raise ValueError(f"The 'param' parameter of {PROG} synth must give {key!r} once. Got it twice.")
        params[key] = spec.param(key).parse(value.strip(), owner)
        spec.param(key).check(params[key], owner)
    n_public = None
    if args.n_public is not None:
        accepted = set(inspect.signature(spec.func).parameters)
        if "n_public" not in accepted:
            raise ValueError(f"The 'n_public' parameter of {owner} is not accepted by this mechanism. "
                             f"Got {args.n_public!r}.")
        if "n_public" in params:
            raise ValueError(f"The 'n_public' parameter of {owner} must be given once (--n-public or --param). "
                             f"Got it twice.")
        n_public = int_arg(args.n_public, "n_public", owner)
    return bind(owner, epsilon=epsilon, delta=delta, neighbours=args.neighbours, n_public=n_public, params=params)


def check_auto_args(args: argparse.Namespace) -> None:
    """``-m auto``, before any data is read: ε checked, no --param (auto picks the mechanism's parameters)."""
    check_epsilon(float_arg(args.epsilon, "epsilon", AUTO), AUTO)
    if args.param:
        raise ValueError(f"The 'param' parameter of {PROG} synth must be left out with -m auto: auto picks the "
                         f"mechanism and its parameters (name a mechanism to set them). Got {args.param[0]!r}.")


def bind_auto_mechanism(args: argparse.Namespace, domain: Domain):
    """``-m auto`` once the domain is known: the mechanism :func:`dpsynth_core.defaults.auto_mechanism` picks for
    its public shape, bound to the command line's ε, δ, relation and n_public; the release names the choice."""
    delta = None if args.delta is None else float_arg(args.delta, "delta", AUTO)
    n_public = None if args.n_public is None else int_arg(args.n_public, "n_public", AUTO)
    return bind_auto(domain, epsilon=float_arg(args.epsilon, "epsilon", AUTO), delta=delta,
                     neighbours=args.neighbours, n_public=n_public)


def synth_settings(args: argparse.Namespace, spec, owner: str) -> tuple[DomainOptions, Any, int | None, int | None]:
    """What ``synth`` checks before it reads any row, with either engine: the domain options, the mechanism
    (bound now; None for ``-m auto``, chosen by :func:`mechanism_for` once the domain is known), the seed and
    the row limit."""
    options = domain_options(args, owner)
    mechanism = None
    if spec is None:
        check_auto_args(args)
    else:
        check_takes_categories(spec, options)
        mechanism = bind_mechanism(spec, args)
        warn_weak_epsilon(mechanism.epsilon)
    return options, mechanism, seed_arg(args), max_rows_arg(args)


def mechanism_for(args: argparse.Namespace, mechanism, domain: Domain):
    """The mechanism :func:`synth_settings` bound, or ``-m auto``'s choice for the domain just read."""
    if mechanism is None:
        mechanism = bind_auto_mechanism(args, domain)
        warn_weak_epsilon(mechanism.epsilon)
    return mechanism


def seed_arg(args: argparse.Namespace) -> int | None:
    if args.seed is None:
        return None
    seed = int_arg(args.seed, "seed", PROG)
    if seed < 0:
        raise ValueError(f"The 'seed' parameter of {PROG} must be an int in [0, inf). Got {seed}.")
    return seed


def max_rows_arg(args: argparse.Namespace) -> int | None:
    """``--max-rows N``: the most synthetic rows the release may have (default: the library's limit,
    :data:`dpsynth_core.limits.DEFAULTS`). Checked before any file is read."""
    if getattr(args, "max_rows", None) is None:
        return None
    text = str(args.max_rows).replace("_", "").replace(",", "")
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 1 and value == int(value)):
        raise ValueError(f"The 'max-rows' parameter of {PROG} synth must be a whole number of rows >= 1, e.g. "
                         f"5000000 or 5e6. Got {args.max_rows!r}.")
    return int(value)


def row_limit(max_rows: int | None, d: int):
    """The library's output limits for this run: raised (or lowered) to ``max_rows`` rows of ``d`` columns
    by ``--max-rows``, else unchanged."""
    if max_rows is None:
        return contextlib.nullcontext()
    values = max(limits.current().max_synthetic_values, max_rows * max(1, int(d)))
    return limits.override(max_synthetic_rows=max_rows, max_synthetic_values=values)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except OSError:
        return False


def _same_path(a: str, b: str) -> bool:
    """Two output paths that name one file (also through symlinks or before either exists)."""
    if a == "-" or b == "-":
        return False
    return _same_file(a, b) or os.path.realpath(a) == os.path.realpath(b)


def _check_output(path: str | None) -> None:
    """Refuse, before any work, an output path whose directory is missing or that is a directory, in words
    that say it is the output (the OS's own words are kept in parentheses)."""
    if not path or path == "-":
        return
    final = os.path.realpath(path)
    folder = os.path.dirname(final) or "."
    if os.path.isdir(final):
        raise ValueError(f"The output {path!r} is a folder ({os.strerror(errno.EISDIR)}): give a file name, "
                         f"e.g. {os.path.join(path, 'synthetic.csv')!r}.")
    if not os.path.isdir(folder):
        raise ValueError(f"The output {path!r} cannot be written: its folder {os.path.dirname(path) or '.'!r} "
                         f"does not exist ({os.strerror(errno.ENOENT)}); create it or choose another path.")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"The output {path!r} cannot be written: no permission to write in its folder "
                         f"({os.strerror(errno.EACCES)}); choose another path.")


def write_outputs(outputs: Sequence[tuple[str | None, str | bytes]]) -> None:
    """Write every ``(path, data)`` all or nothing: each file goes to a temporary name in its own
    directory, and once all are written they are moved into place (``os.replace``, atomic on one file
    system). An error on the way removes the temporary files and leaves any existing output untouched.
    ``"-"`` is standard output, written last; a ``None`` path is skipped."""
    staged: list[tuple[str, str]] = []
    try:
        for path, data in outputs:
            if not path or path == "-":
                continue
            final = os.path.realpath(path)  # through a symlink: replace its target, as open() would write it
            folder, base = os.path.split(final)
            tmp = os.path.join(folder, f".{base}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
            staged.append((tmp, final))
            with open(tmp, "xb") as fh:
                fh.write(data if isinstance(data, bytes) else data.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
        for tmp, final in staged:
            os.replace(tmp, final)
    finally:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # only still there when something failed
    for path, data in outputs:
        if path == "-":
            out = sys.stdout.buffer if isinstance(data, bytes) else sys.stdout
            out.write(data)
            out.flush()


def check_not_input(args: argparse.Namespace, inputs: Sequence[str]) -> None:
    """Refuse an output that is one of the input files (it would overwrite the private data), and an
    output whose directory does not exist (before any work, not after a long run)."""
    report = getattr(args, "report", None)
    if args.output and report and (report == args.output or _same_path(report, args.output)):
        if args.output == "-":
            raise ValueError(f"The report (--report -) and the synthetic data (-o -) of {PROG} synth must not "
                             "both go to the standard output: give the report a file name.")
        raise ValueError(f"The report {report!r} of {PROG} synth must not be the synthetic data's file (-o "
                         f"{args.output!r}): the report would replace the data. Give it another name, e.g. "
                         f"{os.path.splitext(args.output)[0] + '_report.json'!r}.")
    for out in (args.output, report):
        if not out or out == "-":
            continue
        for path in inputs:
            if _same_path(out, path):
                raise ValueError(f"The output {out!r} of {PROG} synth must not be the input file (it would "
                                 f"overwrite the private data).")
        _check_output(out)


def say_running(args: argparse.Namespace, spec, mechanism, domain, seed: int | None) -> None:
    what = f"{spec.name} (ε = {mechanism.epsilon:g}, {mechanism.neighbours} neighbours)"
    kinds = f" ({domain.k} numeric, {domain.d - domain.k} categorical)" if domain.is_mixed else ""
    say(args, f"running {what} on {domain.d} column(s){kinds}")
    if seed is not None:
        say(args, f"--seed {seed}: the output is reproducible and NOT private (anyone who knows the seed can "
                   "undo the noise); leave --seed out for a private release")


def write_release(args: argparse.Namespace, release, seed: int | None) -> None:
    """The synthetic CSV and the public report, all or nothing (temporary names moved into place)."""
    outputs: list[tuple[str | None, str | bytes]] = [(args.output, synthetic_csv(release, rng=seed))]
    if args.report:
        outputs.append((args.report, report_json(release)))
    write_outputs(outputs)
    m = release.synthetic.shape[0]
    say(args, f"wrote {m} synthetic rows to {args.output} (in random order)")
    cap = release.params.get("limits") if isinstance(release.params, dict) else None
    if cap:  # said even with --quiet: fewer rows than the release planned
        print(f"{PROG}: warning: the output was capped at {cap['max_synthetic_rows']:,} rows (the release planned "
              f"{cap['planned_rows']:,}; same distribution, fewer points). --max-rows N allows more.",
              file=sys.stderr, flush=True)
    if m == 0:  # not an error (the release is valid and private), but never a silent surprise
        print(f"{PROG}: warning: the release has no rows: at ε = {release.epsilon:g} the noise left no synthetic "
              "point (the report's notes say why); a larger ε gives rows.", file=sys.stderr, flush=True)
    if args.report:
        say(args, f"wrote the report (public values only) to {args.report}")


# ---------------------------------------------------------------------------- the public domain's options
#: The rules of the domain options, for ``--help`` (an epilog) and the README.
DOMAIN_HELP = """\
Public domain. Bounds and categories are public inputs, declared without looking at the data (the set
of values present in a private file is itself private). Either:

  --bounds 'lo:hi,...' [--categories 'col=a|b;col=x|y'] [--integers a,b] [--columns a,b]
      --bounds gives one 'lo:hi' per NUMERIC column, in the order the columns are read (or a single
      'lo:hi' for all). --integers names numeric columns that hold whole numbers (counts, ages in
      years): every release rounds them inside their bounds, and `dpsynth report` compares them as
      integers. Declared, never guessed from the file. --categories declares the categorical columns and their categories: '|'
      separates the categories of a column, ';' the columns. A declared column is read as text,
      whatever it looks like (a column of 1 and 2 declared 'grade=1|2' is categorical), and every value
      must be one of its categories exactly (spaces around it aside), or a missing value; any other
      value is an error naming the row, the column and the value. The numeric columns are those of
      --columns, or every numeric column of the file; the categorical columns that --columns does not
      name follow it.
  --domain DOMAIN.json
      A JSON file declaring every column: {"lower": [18, 15], "upper": [90, 45], "names": ["age", "bmi",
      "sex", "region"], "categories": {"sex": ["F", "M"], "region": ["north", "south", "east"]},
      "weights": {"region": 0.5}, "other": {"region": "elsewhere"}}. "lower"/"upper" are the bounds of
      the numeric columns, in their order; "names" lists the numeric columns, or every column in the
      table's order; optional "weights" (the distance between two different categories, default 1)
      and "other" (a category that receives every undeclared value, instead of an error); optional
      "numeric_names" (the columns "lower"/"upper" bound, as a release's report writes it: checked);
      optional "integers" (the whole-number columns, as --integers); "provenance": "data" marks a
      domain read off the data (its releases are NOT differentially private). A report written by
      `dpsynth synth --report` or `dpsynth report -o` is a domain file too: its "domain" block is
      read as it is. The file names the columns used: --bounds, --categories, --integers and
      --columns are refused with it (one declaration, no contradiction to resolve).
"""


@dataclass(frozen=True)
class DomainOptions:
    """What ``--bounds``, ``--categories``, ``--domain`` and ``--columns`` declare, checked before any file
    is read: either ``domain`` (a domain file), or ``bounds`` with optional ``categories`` and ``columns``."""

    bounds: str | None
    categories: Any  # CategoryMap of --categories, or None
    domain: Domain | None
    columns: list[str] | None
    integers: tuple[str, ...] = ()

    @property
    def categorical(self) -> tuple[str, ...]:
        """The declared categorical columns."""
        if self.domain is not None:
            return tuple(self.domain.categories)
        return tuple(self.categories or ())

    def read_kwargs(self, columns: Sequence[str] | None = None) -> dict[str, Any]:
        """Arguments of :func:`~dpsynth_core.tabular.read_table` / ``read_parquet`` (``columns`` overrides
        ``--columns``, e.g. the columns of another file)."""
        if self.domain is not None:
            return {"domain": self.domain}
        return {"columns": list(columns) if columns is not None else self.columns,
                "categories": dict(self.categories) if self.categories else None}


def add_domain_options(parser: argparse.ArgumentParser, *, columns_help: str | None = None) -> None:
    """Add ``--bounds``/``-b``, ``--categories``, ``--domain`` and ``--columns`` (rules: :data:`DOMAIN_HELP`,
    which callers put in the parser's epilog with ``formatter_class=argparse.RawDescriptionHelpFormatter``)."""
    group = parser.add_argument_group("public domain (see below; never read off the data)")
    group.add_argument("--bounds", "-b", default=None, metavar="'lo:hi,...'",
                       help="public bounds of the numeric columns, one 'lo:hi' per numeric column or one for all")
    group.add_argument("--categories", default=None, metavar="'col=a|b;col=x|y'",
                       help="categorical columns and their public categories")
    group.add_argument("--domain", default=None, metavar="DOMAIN.json",
                       help="a JSON domain file declaring every column (instead of --bounds/--categories/--columns)")
    group.add_argument("--integers", default=None, metavar="a,b",
                       help="numeric columns that hold whole numbers (declared, never guessed from the file)")
    group.add_argument("--columns", default=None, metavar="a,b",
                       help=columns_help or "comma-separated columns to use (default: every numeric column and "
                                            "every declared categorical one)")


def read_domain_file(path: str, owner: str) -> Domain:
    """The :class:`Domain` of a JSON domain file (``--domain``): :func:`dpsynth_core.domain_file.read_domain`,
    which also reads the ``"domain"`` block of a report (``--report``, ``dpsynth report -o``). A syntax error
    names its line and column; a wrong value says what to change."""
    if not os.path.isfile(path):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    try:
        return read_domain(path)
    except DomainFileError as exc:
        raise ValueError(f"{str(exc).rstrip('.')}. See `{PROG} synth --help` for the format.") from None


def domain_options(args: argparse.Namespace, owner: str) -> DomainOptions:
    """The domain options of :func:`add_domain_options`, checked before any file is read: contradictions
    are usage errors; a domain file is read and checked; ``--categories`` is parsed and checked."""
    bounds, cats_text, path = args.bounds, args.categories, args.domain
    integers_text = getattr(args, "integers", None)
    if path is not None:
        for flag, value in (("--bounds", bounds), ("--categories", cats_text), ("--columns", args.columns),
                            ("--integers", integers_text)):
            if value is not None:
                raise UsageError(f"{flag} and --domain both declare the columns: give them in the domain file, or "
                                 f"leave out --domain")
        domain = read_domain_file(path, owner)
        return DomainOptions(bounds=None, categories=None, domain=domain, columns=None)
    if bounds is None:
        raise UsageError("the public domain is required: --bounds 'lo:hi,...' for the numeric columns (with "
                         "--categories for the categorical ones), or --domain DOMAIN.json")
    categories = None
    if cats_text is not None:
        try:
            parsed = Domain.parse_categories(cats_text)
        except (ValueError, TypeError) as exc:
            raise type(exc)(str(exc).replace("of Domain.parse_categories", f"of {owner}")) from None
        categories, _ = check_categories(parsed, owner=owner)
    integers = columns_arg(integers_text, "integers") or []
    if len(set(integers)) != len(integers):
        raise ValueError(f"The 'integers' parameter of {owner} must name each column once. Got {integers_text!r}.")
    clash = [c for c in integers if c in (categories or {})]
    if clash:
        raise ValueError(f"The 'integers' parameter of {owner} must name numeric columns: {clash[0]!r} is declared "
                         f"categorical (--categories). Got {integers_text!r}.")
    return DomainOptions(bounds=bounds, categories=categories, domain=None, columns=columns_arg(args.columns),
                         integers=tuple(integers))


def check_takes_categories(spec, options: DomainOptions) -> None:
    """Refuse, before reading the data, a mechanism that does not take categorical columns."""
    if options.categorical and not spec.categorical:
        takers = ", ".join(sorted(n for n, s in MECHANISMS.items() if s.categorical)) or "none yet"
        raise ValueError(f"The 'mechanism' parameter of {PROG} synth must take categorical columns: {spec.name} "
                         f"reads numeric columns only (these mechanisms take categorical ones: {takers}). Got "
                         f"{spec.name!r} with the categorical columns {list(options.categorical)}.")


def domain_from_args(args: argparse.Namespace, names: Sequence[str], *, owner: str,
                     options: DomainOptions | None = None) -> Domain:
    """The public :class:`Domain` of the columns ``names`` (in the order they were read): the domain file,
    or ``--bounds`` for the numeric columns with the ``--categories`` of the categorical ones."""
    opts = options if options is not None else domain_options(args, owner)
    if opts.domain is not None:
        return opts.domain
    cats = opts.categories or {}
    numeric = [n for n in names if n not in cats]
    missing = [c for c in opts.integers if c not in numeric]
    if missing:
        raise ValueError(f"The 'integers' parameter of {owner} must name numeric columns read ({', '.join(numeric)}). "
                         f"Got {missing[0]!r}; add it to --columns, or leave it out of --integers.")
    if not cats:
        box = domain_from_bounds(opts.bounds, numeric, owner)
        return _with_integers(box, opts.integers, owner)
    if not numeric:
        raise ValueError(f"The 'columns' parameter of {owner} must include at least one numeric column: a "
                         f"domain of categorical columns alone is not supported. Got only the categorical "
                         f"columns {list(names)}.")
    box = domain_from_bounds(opts.bounds, numeric, owner, word="numeric column")
    return _with_integers(Domain(box.lower, box.upper, names=tuple(names),
                                 categories={c: cats[c] for c in names if c in cats}), opts.integers, owner)


def _with_integers(domain: Domain, integers: Sequence[str], owner: str) -> Domain:
    """``domain`` with the whole-number columns of ``--integers`` (checked by :class:`Domain`, in the
    command's words)."""
    if not integers:
        return domain
    try:
        return dataclasses.replace(domain, integers=tuple(integers))
    except (ValueError, TypeError) as exc:
        raise type(exc)(str(exc).replace("of Domain", f"of {owner} (--integers)")) from None


def synthetic_limits() -> dict[str, int]:
    """The reader's limits for a synthetic file of ``w1`` and ``report``: as many rows as ``dpsynth synth``
    writes without --max-rows (:data:`dpsynth_core.limits.DEFAULTS`' ``max_synthetic_rows``: a release of a
    table at the reader's limit has a noisy size, a few rows more), and the byte limit scaled alike. So the
    commands accept each other's files."""
    rows = max(MAX_ROWS, int(limits.current().max_synthetic_rows))
    return {"max_rows": rows, "max_bytes": MAX_BYTES * max(1, -(-rows // MAX_ROWS))}


def _reworded(exc: CSVError, args: argparse.Namespace) -> CSVError | None:
    """The reader's error with the command line's own remedy (a flag this command has), or None."""
    def again(text: str) -> CSVError:
        return CSVError(text, exc.kind, row=exc.row, column=exc.column, count=exc.count, advice=exc.advice)

    mine = [a for a in exc.advice if hasattr(args, a.param if a.param != "missing" else "drop_missing")]
    if mine:  # the library's words for the remedy become the flag's: "add --drop-bad-rows to drop the rows ..."
        text = str(exc)
        for a in mine:
            text = text.replace(a.why, f"add {cli_words(a)} to {a.why}") if a.why in text else \
                f"{text.rstrip('.')} (add {cli_words(a)} to drop them)."
        return again(text)
    if exc.kind in ("size", "too_many_rows") and hasattr(args, "engine"):
        return again(f"{str(exc).rstrip('.')}, or use --engine dask, which reads CSV or Parquet files of any size "
                     f"without holding them in memory.")
    if exc.kind in ("size", "too_many_rows"):  # w1, report: the measures themselves need rows in memory
        return again(f"{str(exc).rstrip('.')}; to compare larger files, compare a random sample of the rows of "
                     f"each.")
    return None


def read_input(args: argparse.Namespace, path: str, *, role: str, owner: str,
               options: DomainOptions | None = None, columns: Sequence[str] | None = None,
               max_rows: int | None = None, max_bytes: int | None = None):
    """Read one CSV or Parquet file (by its suffix) with the declared domain; returns ``(frame, domain)``.

    ``frame`` holds the numeric columns (float64) and the declared categorical ones (pandas categoricals
    of their labels), ready for a mechanism or :meth:`Domain.read`; ``columns`` overrides ``--columns``
    (e.g. the columns of another file); ``max_rows`` / ``max_bytes`` the reader's limits (a synthetic file:
    :func:`synthetic_limits`). The reader's notes go to stderr (text columns left out, the separator found);
    owner-side counts (dropped rows, values sent to an 'other' category) as warnings that say they are not
    in any output. ``--drop-missing`` and ``--drop-bad-rows`` (when the command has them) drop rows with a
    missing value and rows with a bad cell; a reader's error names the flag that gets past it."""
    opts = options if options is not None else domain_options(args, owner)
    reader = read_parquet if path.lower().endswith(PARQUET_SUFFIXES) else read_table
    limit = {k: v for k, v in (("max_rows", max_rows), ("max_bytes", max_bytes)) if v is not None}
    try:
        table = reader(path, **opts.read_kwargs(columns),
                       missing="drop" if getattr(args, "drop_missing", False) else "error",
                       drop_bad_rows=bool(getattr(args, "drop_bad_rows", False)), what=f"the {role} file {path!r}",
                       **limit)
    except CSVError as exc:
        clearer = _reworded(exc, args)
        if clearer is None:
            raise
        raise clearer from None
    # progress lines never carry a count of the private rows; such counts are warnings for the owner
    for note in table.notes:
        if note.topic in ("dropped", "mapped", "bad_rows"):
            warn(f"{path}: {note}{'' if note.topic == 'bad_rows' else ' (owner view: not in any output)'}")
        elif note.topic != "read":
            say(args, f"{path}: {note}")
    used = f"column(s) {', '.join(repr(c) for c in table.numeric)}"
    if table.categorical:
        used = (f"numeric column(s) {', '.join(repr(c) for c in table.numeric) or 'none'} and categorical column(s) "
                f"{', '.join(repr(c) for c in table.categorical)}")
    say(args, f"{path}: using {used}")
    domain = domain_from_args(args, list(table.columns), owner=owner, options=opts)
    if not domain.declared:
        warn("the domain says its bounds or categories were read off the data (provenance 'data'): no release on "
             "it is differentially private, and its outputs say so.")
    return table.frame, domain

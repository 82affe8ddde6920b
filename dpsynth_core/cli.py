"""The ``dpsynth`` command: differentially private synthetic data from a CSV file.

::

    dpsynth list [-v]
    dpsynth synth --mechanism NAME --epsilon E [--delta D] --bounds "lo:hi,lo:hi" [--param key=value ...]
                  [--neighbours R] [--n-public N] [--columns a,b] [--drop-missing] [--seed S]
                  [--engine numpy|dask] [--scheduler ADDRESS] [--workers N] [--memory-limit SIZE]
                  IN -o OUT.csv [--report OUT.json]
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

Engines. ``--engine numpy`` (the default) reads one CSV file into memory, within the limits of
:func:`~dpsynth_core.tabular.read_table` (50 MB, 200,000 rows). ``--engine dask`` reads a glob or a
directory of Parquet (``*.parquet``) or CSV (``*.csv``) files lazily with ``dask.dataframe`` and
hands the Dask DataFrame to the mechanism, which sums its per-record statistic partition by partition
(:mod:`dpsynth_core.rows`): the data are never held in memory at once, and with the same seed the
release is the one the numpy engine makes on the same rows. The partitions are computed by a
``distributed.LocalCluster`` started for the run (one single-threaded worker process per core, a
memory limit per worker), or by an existing cluster (``--scheduler tcp://host:8786``). For tests and
debugging, the environment variable ``DPSYNTH_DASK_SCHEDULER`` (``synchronous``, ``threads`` or
``processes``) makes the dask engine use that local Dask scheduler instead of starting a cluster.
Outputs are written to a temporary name in their directory and moved into place once the release is
complete, so a failed run leaves no partial file. See docs/scale.md.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import glob
import inspect
import json
import math
import os
import re
import secrets
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .rows import WorkerError

__all__ = ["main", "build_parser"]

_PROG = "dpsynth"
#: Share of rows clamped by --bounds above which the command warns (owner's eyes only).
CLAMP_WARNING_SHARE = 0.01
#: Seconds between two "still running" lines on stderr.
HEARTBEAT_SECONDS = 5.0
#: Environment variable naming a local Dask scheduler for the dask engine (tests and debugging).
SCHEDULER_ENV = "DPSYNTH_DASK_SCHEDULER"
_LOCAL_SCHEDULERS = ("synchronous", "threads", "processes")
#: Seconds to wait for an existing scheduler (--scheduler) to answer, and for its first worker.
CONNECT_TIMEOUT = 30
_PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
_CSV_SUFFIXES = (".csv",)


class _UsageError(Exception):
    """A command-line usage error (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors instead of usage + message + exit."""

    def error(self, message: str):  # noqa: D401 - argparse API
        if message.startswith("unrecognized arguments") and any(
                word.lower().endswith(_PARQUET_SUFFIXES + _CSV_SUFFIXES) for word in message.split()[2:]):
            message += " (a glob of files for --engine dask must be quoted, e.g. 'data/*.parquet', so that the " \
                       "shell passes it as one argument)"
        raise _UsageError(message)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _say(args: argparse.Namespace, text: str) -> None:
    if not getattr(args, "quiet", False):
        print(f"{_PROG}: {text}", file=sys.stderr, flush=True)


class _Heartbeat:
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
            _say(self.args, f"{self.what}: still running ({time.perf_counter() - self._t0:.0f} s"
                            f"{'; ' + extra if extra else ''})")

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
        if exc.kind in ("size", "too_many_rows") and hasattr(args, "engine"):
            raise CSVError(f"{str(exc).rstrip('.')}, or use --engine dask, which reads CSV or Parquet files of any "
                           f"size without holding them in memory.", exc.kind, row=exc.row, column=exc.column,
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


def _check_output(path: str | None) -> None:
    """Refuse, before any work, an output path whose directory is missing or that is a directory."""
    if not path or path == "-":
        return
    final = os.path.realpath(path)
    folder = os.path.dirname(final) or "."
    if os.path.isdir(final):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)


def _write_outputs(outputs: Sequence[tuple[str | None, str | bytes]]) -> None:
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


def _engine(args: argparse.Namespace) -> str:
    """The engine of ``synth``: numpy unless --engine dask or --scheduler (which implies dask)."""
    engine = args.engine or ("dask" if args.scheduler else "numpy")
    if engine == "numpy":
        if args.scheduler:
            raise _UsageError("--scheduler runs on a Dask cluster: it needs --engine dask (or leave --engine out)")
        for flag, value in (("--workers", args.workers), ("--memory-limit", args.memory_limit)):
            if value is not None:
                raise _UsageError(f"{flag} configures the local Dask cluster: it needs --engine dask")
    elif args.scheduler:
        for flag, value in (("--workers", args.workers), ("--memory-limit", args.memory_limit)):
            if value is not None:
                raise _UsageError(f"{flag} configures the local Dask cluster that --scheduler replaces: set the "
                                  f"workers of your cluster where you start them")
    return engine


def _cmd_synth(args: argparse.Namespace) -> int:
    spec = _mechanism_spec(args.mechanism)
    engine = _engine(args)
    if engine == "dask":
        return _synth_dask(args, spec)
    if not os.path.isfile(args.input) and (os.path.isdir(args.input) or any(ch in args.input for ch in "*?[")
                                           or args.input.lower().endswith(_PARQUET_SUFFIXES)):
        raise ValueError(f"The input {args.input!r} is not a CSV file: the numpy engine reads one CSV file; for a "
                         f"glob, a directory or Parquet files use --engine dask.")
    _check_not_input(args, [args.input])
    mechanism = _bind(spec, args)
    seed = _seed(args)
    columns = _columns_arg(args.columns)
    _say(args, f"reading {args.input}")
    df = _load(args, args.input, columns, "input")
    domain = _domain(args.bounds, [str(c) for c in df.columns], f"{_PROG} synth")
    _warn_clamping(args, df, domain, args.input)
    _say_running(args, spec, mechanism, domain, seed)
    with _Heartbeat(args, spec.name) as hb:
        release = mechanism(df, domain, rng=seed)
    _say(args, f"{spec.name} done in {hb.seconds:.2f} s: {release.privacy}")
    _write_release(args, release, seed)
    return 0


def _check_not_input(args: argparse.Namespace, inputs: Sequence[str]) -> None:
    """Refuse an output that is one of the input files (it would overwrite the private data), and an
    output whose directory does not exist (before any work, not after a long run)."""
    for out in (args.output, args.report):
        if not out or out == "-":
            continue
        for path in inputs:
            if _same_file(out, path) or os.path.abspath(out) == os.path.abspath(path):
                raise ValueError(f"The output {out!r} of {_PROG} synth must not be the input file (it would "
                                 f"overwrite the private data).")
        _check_output(out)


def _say_running(args: argparse.Namespace, spec, mechanism, domain, seed: int | None) -> None:
    what = f"{spec.name} (ε = {mechanism.epsilon:g}, {mechanism.neighbours} neighbours)"
    _say(args, f"running {what} on {domain.d} column(s)")
    if seed is not None:
        _say(args, f"--seed {seed}: the output is reproducible and NOT private (anyone who knows the seed can "
                   "undo the noise); leave --seed out for a private release")


def _write_release(args: argparse.Namespace, release, seed: int | None) -> None:
    """The synthetic CSV and the public report, all or nothing (temporary names moved into place)."""
    from .export import report_json, synthetic_csv

    outputs: list[tuple[str | None, str | bytes]] = [(args.output, synthetic_csv(release, rng=seed))]
    if args.report:
        outputs.append((args.report, report_json(release)))
    _write_outputs(outputs)
    _say(args, f"wrote {release.synthetic.shape[0]} synthetic rows to {args.output} (in random order)")
    if args.report:
        _say(args, f"wrote the report (public values only) to {args.report}")


# ------------------------------------------------------------------------------ the dask engine
def _dask_files(pattern: str) -> tuple[list[str], str]:
    """The files of the dask engine's input (a glob, a directory or one file) and their format."""
    path = os.path.expanduser(pattern)
    if os.path.isdir(path):
        found = {kind: sorted(f for s in suffixes for f in glob.glob(os.path.join(glob.escape(path), "*" + s)))
                 for kind, suffixes in (("Parquet", _PARQUET_SUFFIXES), ("CSV", _CSV_SUFFIXES))}
        if found["Parquet"] and found["CSV"]:
            raise ValueError(f"The input directory {pattern!r} holds both Parquet and CSV files; give a glob that "
                             f"picks one kind, e.g. {os.path.join(pattern, '*.parquet')!r}.")
        files = found["Parquet"] or found["CSV"]
        if not files:
            raise ValueError(f"The input directory {pattern!r} holds no Parquet (*.parquet) or CSV (*.csv) file.")
    elif any(ch in path for ch in "*?["):
        files = sorted(f for f in glob.glob(path, recursive=True) if os.path.isfile(f))
        if not files:
            raise ValueError(f"The input {pattern!r} matches no file.")
    elif os.path.isfile(path):
        files = [path]
    else:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), pattern)
    kinds = {f: "Parquet" if f.lower().endswith(_PARQUET_SUFFIXES) else "CSV" if f.lower().endswith(_CSV_SUFFIXES)
             else None for f in files}
    other = [f for f, k in kinds.items() if k is None]
    if other or len(set(kinds.values())) > 1:
        odd = other[0] if other else next(f for f, k in kinds.items() if k != kinds[files[0]])
        raise ValueError(f"The input {pattern!r} must be Parquet files (*.parquet) or CSV files (*.csv), all of one "
                         f"kind. Got {os.path.basename(odd)!r} among {len(files)} file(s).")
    # absolute paths: the workers of an existing cluster do not share this process's working directory
    return [os.path.abspath(f) for f in files], kinds[files[0]]


def _first_line(path: str) -> str:
    with open(path, "rb") as fh:
        line = fh.readline(1 << 20)
    return line.decode("utf-8-sig", errors="replace").rstrip("\r\n")


def _numeric(dtype) -> bool:
    import pandas as pd

    return (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
            and not pd.api.types.is_complex_dtype(dtype))


def _dtype_words(dtype) -> str:
    import pandas as pd

    if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        return "text"
    return f"values of type {dtype}"


@contextlib.contextmanager
def _reading(label: str):
    """Errors of Dask's readers while they read the footers or a sample, as one line naming the input
    (a cell that is text is left to :func:`_dask_value_error`, which does not quote it)."""
    try:
        yield
    except (ValueError, OSError) as exc:
        text = str(exc)
        if "could not convert string to float" in text or "Unable to parse string" in text:
            raise
        text = text.split("Original Message:", 1)[-1]  # Dask's wrapper around the reader's own message
        raise ValueError(f"{label} could not be read: {_one_line(text)}") from exc


def _dask_frame(args: argparse.Namespace, files: list[str], kind: str, columns: list[str] | None):
    """The input as a lazy Dask DataFrame of the numeric columns used (nothing but the Parquet
    footers, or a sample of the first CSV file, is read here) and the names of those columns."""
    import dask.dataframe as dd

    label = f"The input {args.input!r} ({len(files)} {kind} file{'s' if len(files) > 1 else ''})"
    csv_kw: dict[str, Any] = {}
    if kind == "CSV":
        header = _first_line(files[0])
        # the separator by the rule the numpy engine and the dashboard use, on the start of the first
        # file: refused when two separators fit equally well
        from .tabular import detect_delimiter

        csv_kw = {"sep": detect_delimiter(files[0], label)}
        import pandas as pd

        if tuple(int(x) for x in re.findall(r"\d+", pd.__version__)[:2]) < (3, 1):
            # correctly rounded, as the numpy engine reads (pandas >= 3.1 has one converter, and warns)
            csv_kw["float_precision"] = "round_trip"
        for f in files[1:]:
            if _first_line(f) != header:
                raise ValueError(f"{label}: the header of {os.path.basename(f)!r} differs from that of "
                                 f"{os.path.basename(files[0])!r}; all the CSV files must have the same columns in "
                                 f"the same order.")
        with _reading(label):
            frame = dd.read_csv(files, **csv_kw)
    else:
        with _reading(label):
            frame = dd.read_parquet(files)
    dtypes = {str(c): frame.dtypes[c] for c in frame.columns}
    if columns is not None:
        for c in columns:
            if c not in dtypes:
                close = difflib.get_close_matches(c, list(dtypes), n=1)
                raise ValueError(f"{label} has no column {c!r}; its columns are "
                                 f"{', '.join(repr(k) for k in dtypes)}"
                                 f"{f' (did you mean {close[0]!r}?)' if close else ''}.")
            if not _numeric(dtypes[c]):
                raise ValueError(f"{label}: column {c!r} holds {_dtype_words(dtypes[c])}, not numbers; choose "
                                 f"columns that hold numbers.")
        if len(set(columns)) != len(columns):
            raise ValueError(f"The 'columns' parameter of {_PROG} must name each column once. Got {args.columns!r}.")
        used = list(columns)
    else:
        used = [c for c, t in dtypes.items() if _numeric(t)]
        left = [c for c, t in dtypes.items() if not _numeric(t)]
        if not used:
            raise ValueError(f"{label} has no numeric column: its {len(dtypes)} column(s) hold "
                             f"{', '.join(sorted({_dtype_words(t) for t in dtypes.values()}))}.")
        if left:
            _say(args, f"{args.input}: left out {len(left)} column(s) not holding numbers: "
                       f"{', '.join(repr(c) for c in left[:8])}{' ...' if len(left) > 8 else ''}")
    with _reading(label):
        if kind == "CSV":  # read again with only those columns, as float64 in every block
            frame = dd.read_csv(files, usecols=used, dtype=dict.fromkeys(used, "float64"), **csv_kw)
        else:
            frame = dd.read_parquet(files, columns=[c for c in frame.columns if str(c) in used])
    if any(not isinstance(c, str) for c in frame.columns):
        frame.columns = [str(c) for c in frame.columns]
    frame = frame[used]
    if getattr(args, "drop_missing", False):
        frame = frame.dropna()  # lazily; the number of rows dropped is not counted (it would take a pass)
    _say(args, f"{args.input}: {len(files)} {kind} file(s), read lazily in {frame.npartitions} partition(s); using "
               f"column(s) {', '.join(repr(c) for c in used)}")
    return frame, used


def _memory_limit(text: str | None, workers: int) -> int:
    """Bytes per worker: ``auto`` (the default) shares this machine's memory equally among the workers."""
    from dask.utils import parse_bytes
    from distributed.system import MEMORY_LIMIT

    if text is None or text == "auto":
        return int(MEMORY_LIMIT // workers)
    try:
        value = int(parse_bytes(text))
    except (ValueError, TypeError):
        value = 0
    if value <= 0:
        raise ValueError(f"The 'memory-limit' parameter of {_PROG} synth must be 'auto' or a size per worker such "
                         f"as 2GB or 1500MiB. Got {text!r}.")
    return value


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _TaskCount:
    """Dask tasks finished and submitted so far (for the progress line); read from another thread."""

    def __init__(self) -> None:
        self.done = 0
        self.submitted = 0

    def text(self) -> str:
        if not self.submitted:
            return ""
        return f"Dask tasks finished so far: {self.done} of {self.submitted} submitted"


def _local_counter(count: _TaskCount):
    """A dask.callbacks.Callback counting the tasks of the local schedulers."""
    from dask.callbacks import Callback

    class _Counter(Callback):
        def _start_state(self, dsk, state):
            count.submitted += len(state["ready"]) + len(state["waiting"])

        def _posttask(self, key, result, dsk, state, worker_id):
            count.done += 1

    return _Counter()


def _scheduler_counter(count: _TaskCount):
    """A distributed SchedulerPlugin counting the tasks of a cluster's scheduler."""
    from distributed.diagnostics.plugin import SchedulerPlugin

    class _Counter(SchedulerPlugin):
        name = "dpsynth-cli-progress"

        def update_graph(self, scheduler, *, tasks=None, **kwargs):
            count.submitted += len(tasks or ())

        def transition(self, key, start, finish, *args, **kwargs):
            if start == "processing" and finish == "memory":
                count.done += 1

    return _Counter()


@contextlib.contextmanager
def _dask_compute(args: argparse.Namespace):
    """Where the Dask graphs of the run are computed, for the duration of the block; yields a
    :class:`_TaskCount`, or None when the progress of an existing cluster is not observed."""
    import logging

    import dask
    import dask.utils

    if args.scheduler:
        from distributed import Client

        _say(args, f"connecting to the Dask scheduler at {args.scheduler}")
        try:
            client = Client(args.scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise OSError(f"could not connect to the Dask scheduler at {args.scheduler!r} within {CONNECT_TIMEOUT} s "
                          f"({type(exc).__name__}: {_one_line(exc)})") from None
        try:
            if not client.nthreads():
                _say(args, f"waiting up to {CONNECT_TIMEOUT} s for a worker to join the cluster")
                try:
                    client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
                except (OSError, TimeoutError):
                    raise OSError(f"the Dask scheduler at {args.scheduler!r} has no worker (none joined within "
                                  f"{CONNECT_TIMEOUT} s)") from None
            threads = client.nthreads()
            _say(args, f"using the Dask cluster at {args.scheduler}: {len(threads)} worker(s), "
                       f"{sum(threads.values())} thread(s); its own dashboard shows the progress of the tasks")
            yield None
        finally:
            client.close()
        return
    local = os.environ.get(SCHEDULER_ENV, "").strip()
    if local:
        if local not in _LOCAL_SCHEDULERS:
            raise ValueError(f"The environment variable {SCHEDULER_ENV} must be one of {', '.join(_LOCAL_SCHEDULERS)} "
                             f"(a local Dask scheduler, for tests and debugging) or unset. Got {local!r}.")
        _say(args, f"computing with Dask's local {local!r} scheduler ({SCHEDULER_ENV})")
        count = _TaskCount()
        with dask.config.set(scheduler=local), _local_counter(count):
            yield count
        return
    from distributed import Client, LocalCluster

    workers = _cores() if args.workers is None else _int_arg(args.workers, "workers", f"{_PROG} synth")
    if workers < 1:
        raise ValueError(f"The 'workers' parameter of {_PROG} synth must be an int in [1, inf). Got {workers}.")
    limit = _memory_limit(args.memory_limit, workers)
    _say(args, f"starting a local Dask cluster: {workers} worker process(es), 1 thread each, memory limit "
               f"{dask.utils.format_bytes(limit)} per worker")
    # the workers' own logs (a failed task's traceback) only with --debug: the error is one line on the client
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=limit,
                           dashboard_address=None,
                           silence_logs=logging.ERROR if getattr(args, "debug", False) else logging.CRITICAL)
    try:
        client = Client(cluster)
        try:
            count = _TaskCount()
            cluster.scheduler.add_plugin(_scheduler_counter(count))  # the scheduler runs in this process
            yield count
        finally:
            client.close()
    finally:
        cluster.close()


def _dask_value_error(exc: Exception, args: argparse.Namespace, names: Sequence[str]) -> Exception:
    """A clearer message for a bad value met while the workers read the files (never quoting a cell):
    ``exc`` itself, or a :class:`WorkerError` caused by it; any other error is returned as it is."""
    cause = exc.__cause__ if isinstance(exc, WorkerError) else exc
    if not isinstance(cause, ValueError):
        return exc
    text = str(cause)
    if "could not convert string to float" in text or "Unable to parse string" in text:
        return ValueError(f"The input {args.input!r}: a cell of the column(s) used holds text, not a number; choose "
                          f"columns that hold plain numbers (a dot as decimal mark) with --columns.")
    if "must contain only finite values" in text:
        found = re.search(r"column (\d+)", text)
        col = names[int(found.group(1))] if found and int(found.group(1)) < len(names) else None
        where = f" in column {col!r}" if col is not None else ""
        hint = "" if getattr(args, "drop_missing", False) else " (add --drop-missing to drop rows with a missing value)"
        return ValueError(f"The input {args.input!r} has a missing or infinite value{where}; every value of the "
                          f"columns used must be a finite number{hint}.")
    return exc


def _warn_clamped_count(args: argparse.Namespace, release, path: str) -> None:
    """The clamping warning of the dask engine, from the count the mechanism made in its pass
    (``release.owner.n_clamped``): no second pass over the data (owner's eyes only)."""
    if release.owner is not None:
        clamped, n = release.owner.n_clamped, release.owner.n
    else:  # an untyped trace
        owner = release.trace.get("owner", {}) if isinstance(release.trace, dict) else {}
        clamped, n = owner.get("n_clamped"), owner.get("n")
    if clamped is None or int(clamped) == 0:
        return
    clamped = int(clamped)
    if n is not None and clamped <= CLAMP_WARNING_SHARE * int(n):
        return
    of = f" of {int(n)}" if n is not None else ""
    print(f"{_PROG}: warning: {clamped}{of} rows of {path} are outside the bounds and were clamped into them. Check "
          f"--bounds: they should be the range the values can take in principle. (Owner view: computed from your "
          f"data; not in any output.)", file=sys.stderr, flush=True)


def _synth_dask(args: argparse.Namespace, spec) -> int:
    """``synth --engine dask``: the files read lazily, the statistic summed by Dask, one release."""
    try:
        import dask.dataframe  # noqa: F401 - the engine's dependency, checked before anything else
        import distributed  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"The dask engine needs Dask: pip install 'dask[dataframe,distributed]' pyarrow "
                         f"({exc}).") from None
    files, kind = _dask_files(args.input)
    _check_not_input(args, files)
    mechanism = _bind(spec, args)
    seed = _seed(args)
    columns = _columns_arg(args.columns)
    names: list[str] = []
    try:
        frame, names = _dask_frame(args, files, kind, columns)
        domain = _domain(args.bounds, names, f"{_PROG} synth")
        with _dask_compute(args) as count:
            _say_running(args, spec, mechanism, domain, seed)
            with _Heartbeat(args, spec.name, progress=count.text if count is not None else None) as hb:
                release = mechanism(frame, domain, rng=seed)
    except (ValueError, WorkerError) as exc:
        clearer = _dask_value_error(exc, args, names)
        if clearer is exc:
            raise
        raise clearer from exc
    tasks = f", {count.done} Dask tasks" if count is not None and count.done else ""
    _say(args, f"{spec.name} done in {hb.seconds:.2f} s{tasks}: {release.privacy}")
    _warn_clamped_count(args, release, args.input)
    _write_release(args, release, seed)
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

    p_syn = sub.add_parser("synth", help="make synthetic data from a CSV file (or Parquet/CSV files, --engine dask)")
    p_syn.add_argument("input", metavar="IN",
                       help="private data: a CSV file with a header row and numeric columns; with --engine dask, a "
                            "quoted glob ('data/*.parquet'), a directory or a file of Parquet or CSV data")
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
    except WorkerError as exc:  # a Dask worker failed: nothing was released, nothing written
        if debug:
            raise
        print(f"{_PROG}: error: {_one_line(exc)} No output was written.", file=sys.stderr)
        return 1
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

"""What both engines of the ``dpsynth`` command share: messages on stderr, the heartbeat, the parsing of
the arguments (bounds, mechanism, seed) and the all-or-nothing writing of the outputs."""

from __future__ import annotations

import argparse
import contextlib
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
from typing import Any

from ..domain import Domain
from ..export import report_json, synthetic_csv
from ..mechanisms import bind

__all__ = ["PROG", "CLAMP_WARNING_SHARE", "HEARTBEAT_SECONDS", "PARQUET_SUFFIXES", "CSV_SUFFIXES", "UsageError",
           "one_line", "say", "Heartbeat", "float_arg", "int_arg", "columns_arg", "domain_from_bounds",
           "bind_mechanism", "seed_arg", "write_outputs", "check_not_input", "say_running", "write_release"]

#: The command's name, at the start of every line it prints on stderr.
PROG = "dpsynth"
#: Share of rows clamped by --bounds above which the command warns (owner's eyes only).
CLAMP_WARNING_SHARE = 0.01
#: Seconds between two "still running" lines on stderr.
HEARTBEAT_SECONDS = 5.0
#: File names the dask engine reads as Parquet, and as CSV.
PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
CSV_SUFFIXES = (".csv",)


class UsageError(Exception):
    """A command-line usage error (exit code 2)."""


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def say(args: argparse.Namespace, text: str) -> None:
    if not getattr(args, "quiet", False):
        print(f"{PROG}: {text}", file=sys.stderr, flush=True)


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


def columns_arg(text: str | None) -> list[str] | None:
    if text is None:
        return None
    cols = [c.strip() for c in text.split(",")]
    if not all(cols):
        raise ValueError(f"The 'columns' parameter of {PROG} must be a comma-separated list of column names. "
                         f"Got {text!r}.")
    return cols


def domain_from_bounds(bounds: str, names: Sequence[str], owner: str):
    """The public :class:`Domain` from ``--bounds`` ("lo:hi" per column, or one for all)."""
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


def bind_mechanism(spec, args: argparse.Namespace):
    """The mechanism bound to the command line's ε, δ, relation, n_public and --param values."""
    owner = spec.name
    epsilon = float_arg(args.epsilon, "epsilon", owner)
    if args.delta is not None and not spec.needs_delta:
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


def seed_arg(args: argparse.Namespace) -> int | None:
    if args.seed is None:
        return None
    seed = int_arg(args.seed, "seed", PROG)
    if seed < 0:
        raise ValueError(f"The 'seed' parameter of {PROG} must be an int in [0, inf). Got {seed}.")
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
    for out in (args.output, args.report):
        if not out or out == "-":
            continue
        for path in inputs:
            if _same_file(out, path) or os.path.abspath(out) == os.path.abspath(path):
                raise ValueError(f"The output {out!r} of {PROG} synth must not be the input file (it would "
                                 f"overwrite the private data).")
        _check_output(out)


def say_running(args: argparse.Namespace, spec, mechanism, domain, seed: int | None) -> None:
    what = f"{spec.name} (ε = {mechanism.epsilon:g}, {mechanism.neighbours} neighbours)"
    say(args, f"running {what} on {domain.d} column(s)")
    if seed is not None:
        say(args, f"--seed {seed}: the output is reproducible and NOT private (anyone who knows the seed can "
                   "undo the noise); leave --seed out for a private release")


def write_release(args: argparse.Namespace, release, seed: int | None) -> None:
    """The synthetic CSV and the public report, all or nothing (temporary names moved into place)."""
    outputs: list[tuple[str | None, str | bytes]] = [(args.output, synthetic_csv(release, rng=seed))]
    if args.report:
        outputs.append((args.report, report_json(release)))
    write_outputs(outputs)
    say(args, f"wrote {release.synthetic.shape[0]} synthetic rows to {args.output} (in random order)")
    if args.report:
        say(args, f"wrote the report (public values only) to {args.report}")

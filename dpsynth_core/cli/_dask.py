"""``dpsynth synth --engine dask``: the input files (a glob, a directory or a file of Parquet or CSV data)
read lazily with ``dask.dataframe``, the partitions computed by a local ``distributed`` cluster started
for the run, an existing cluster (``--scheduler``) or a local Dask scheduler (:data:`SCHEDULER_ENV`),
progress lines with the count of finished Dask tasks, and a worker's error as one clear line.

Dask and distributed are optional (the ``dask`` extra): they are imported inside the functions that
use them, so the rest of the command works without them."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import glob
import itertools
import json
import logging
import os
import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..clamping import clamping_of_release
from ..rows import WorkerError
from ..tabular import (
    MISSING_TOKENS,
    PARQUET_MISSING_TOKENS,
    SUMMARY_META,
    BadRows,
    CSVError,
    bad_rows_summary,
    category_dtype,
    clean_partition,
    detect_delimiter,
    normalise_partition,
    read_table,
)
from ._common import (
    CSV_SUFFIXES,
    PARQUET_SUFFIXES,
    PROG,
    DomainOptions,
    Heartbeat,
    check_not_input,
    domain_from_args,
    int_arg,
    mechanism_for,
    one_line,
    row_limit,
    say,
    say_running,
    synth_settings,
    warn,
    warn_clamping,
    write_release,
)

__all__ = ["SCHEDULER_ENV", "CONNECT_TIMEOUT", "synth_dask"]

#: Environment variable naming a local Dask scheduler for the dask engine (tests and debugging).
SCHEDULER_ENV = "DPSYNTH_DASK_SCHEDULER"
_LOCAL_SCHEDULERS = ("synchronous", "threads", "processes")
#: Seconds to wait for an existing scheduler (--scheduler) to answer, and for its first worker.
CONNECT_TIMEOUT = 30


def _dask_files(pattern: str) -> tuple[list[str], str]:
    """The files of the dask engine's input (a glob, a directory or one file) and their format."""
    path = os.path.expanduser(pattern)
    if os.path.isdir(path):
        found = {kind: sorted(f for s in suffixes for f in glob.glob(os.path.join(glob.escape(path), "*" + s)))
                 for kind, suffixes in (("Parquet", PARQUET_SUFFIXES), ("CSV", CSV_SUFFIXES))}
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
        raise ValueError(f"The input {pattern!r} is not a file, a folder or a glob pattern that matches files "
                         f"({os.strerror(errno.ENOENT)}): check the path.")
    kinds = {f: "Parquet" if f.lower().endswith(PARQUET_SUFFIXES) else "CSV" if f.lower().endswith(CSV_SUFFIXES)
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


#: Bytes of the first CSV file read to decide its decimal mark (as the numpy engine's reader decides it).
DECIMAL_SAMPLE_BYTES = 1 << 20


def _sample(path: str, label: str) -> tuple[str, frozenset[str]]:
    """What :func:`~dpsynth_core.tabular.read_table` finds on the first :data:`DECIMAL_SAMPLE_BYTES` of
    ``path`` (whole lines), so that both engines read a file alike: the decimal mark ("." or ",") and the
    columns its rule calls numeric (mostly numbers: a stray word is a bad cell, not a text column). A file
    that is not UTF-8 text is refused here with the reader's message; any other problem of the sample leaves
    "." and no column (the full read then reports it)."""
    with open(path, "rb") as fh:
        head = fh.read(DECIMAL_SAMPLE_BYTES + 1)
    if len(head) > DECIMAL_SAMPLE_BYTES:
        head = head[: head.rfind(b"\n", 0, DECIMAL_SAMPLE_BYTES) + 1] or head[:DECIMAL_SAMPLE_BYTES]
    try:
        table = read_table(head, missing="drop", drop_bad_rows=True, what=label[0].lower() + label[1:])
    except CSVError as exc:
        if exc.kind in ("encoding", "binary"):
            raise
        return ".", frozenset()
    return table.dialect["decimal"], frozenset(table.numeric)


def _numeric(dtype) -> bool:
    return (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
            and not pd.api.types.is_complex_dtype(dtype))


def _dtype_words(dtype) -> str:
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
        raise ValueError(f"{label} could not be read: {one_line(text)}") from exc


def _na_tokens() -> list[str]:
    """The reader's missing-value tokens in every letter case (pandas compares them exactly): the numeric
    columns of the dask engine read a missing value as the numpy engine does."""
    out: set[str] = set()
    for token in MISSING_TOKENS:
        cases = [(ch.lower(), ch.upper()) if ch.isalpha() else (ch,) for ch in token]
        out.update("".join(p) for p in itertools.product(*cases))
    return sorted(out)


def _categorical_dtype_ok(dtype) -> bool:
    """Text, a pandas categorical or integers (as the numpy engine's Parquet reader accepts)."""
    return (pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)
            or isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_integer_dtype(dtype))


def _csv_options(files: list[str], label: str) -> tuple[dict[str, Any], frozenset[str]]:
    """``dd.read_csv``'s options for the CSV files (the separator and decimal mark by the numpy engine's rules,
    on the start of the first file; the same header in every file) and the columns the numpy engine's rule
    calls numeric on that sample (a stray word does not make a column text: it is a bad cell, refused with its
    row and column, or dropped with --drop-bad-rows)."""
    header = _first_line(files[0])
    # the separator by the rule the numpy engine and the dashboard use: refused when two fit equally well
    csv_kw: dict[str, Any] = {"sep": detect_delimiter(files[0], label)}
    decimal, numeric_like = _sample(files[0], label)
    if decimal == ",":  # decimal commas, detected as the numpy engine does
        csv_kw["decimal"] = ","
    if tuple(int(x) for x in re.findall(r"\d+", pd.__version__)[:2]) < (3, 1):
        # correctly rounded, as the numpy engine reads (pandas >= 3.1 has one converter, and warns)
        csv_kw["float_precision"] = "round_trip"
    for f in files[1:]:
        if _first_line(f) != header:
            raise ValueError(f"{label}: the header of {os.path.basename(f)!r} differs from that of "
                             f"{os.path.basename(files[0])!r}; all the CSV files must have the same columns in "
                             f"the same order.")
    return csv_kw, numeric_like


def _columns_used(args: argparse.Namespace, dtypes: dict, options: DomainOptions, label: str, kind: str,
                  numeric_like: frozenset[str]) -> tuple[list[str], Any, Any]:
    """The columns used (``--columns`` and the declared categorical ones, or every numeric column), checked
    against the files' types; ``numeric_like`` are columns read as numeric whatever Dask's sample made of them
    (the numpy engine's rule on the first file's start). Returns (used, categories, other)."""
    domain = options.domain
    columns = list(domain.names) if domain is not None else options.columns
    cats = domain.categories if domain is not None else (options.categories or {})
    other = domain.other if domain is not None else {}
    for c in list(columns or []) + [c for c in cats if c not in (columns or [])]:
        if c not in dtypes:
            close = difflib.get_close_matches(c, list(dtypes), n=1)
            role = "declared categorical column" if c in cats else "column"
            raise ValueError(f"{label} has no {role} {c!r}; its columns are {', '.join(repr(k) for k in dtypes)}"
                             f"{f' (did you mean {close[0]!r}?)' if close else ''}.")
    for c in cats:
        if kind == "Parquet" and not _categorical_dtype_ok(dtypes[c]):
            hint = "; if it is numeric, give it bounds instead of categories" if _numeric(dtypes[c]) else ""
            raise ValueError(f"{label}: column {c!r}, declared categorical, holds {_dtype_words(dtypes[c])}; a "
                             f"categorical column must hold text or integers{hint}.")

    def numeric(c: str) -> bool:
        return _numeric(dtypes[c]) or c in numeric_like

    if columns is not None:
        for c in columns:
            if c not in cats and not numeric(c):
                raise ValueError(f"{label}: column {c!r} holds {_dtype_words(dtypes[c])}, not numbers; choose columns "
                                 f"that hold numbers, or declare its categories to read it as a categorical column.")
        if len(set(columns)) != len(columns):
            raise ValueError(f"The 'columns' parameter of {PROG} must name each column once. Got {args.columns!r}.")
        return list(columns) + [c for c in cats if c not in columns], cats, other
    used = [c for c in dtypes if c in cats or numeric(c)]
    left = [c for c in dtypes if c not in used]
    if not used:
        raise ValueError(f"{label} has no numeric column: its {len(dtypes)} column(s) hold "
                         f"{', '.join(sorted({_dtype_words(t) for t in dtypes.values()}))}.")
    if left:
        say(args, f"{args.input}: left out {len(left)} column(s) not holding numbers: "
                   f"{', '.join(repr(c) for c in left[:8])}{' ...' if len(left) > 8 else ''}")
    return used, cats, other


def _dask_frame(args: argparse.Namespace, files: list[str], kind: str, options: DomainOptions):
    """The input as a lazy Dask DataFrame of the columns used (nothing but the Parquet footers, or a
    sample of the first CSV file, is read here), the names of those columns, and (``--drop-bad-rows``) the
    lazy summary of the rows dropped for a bad cell, else None. The numeric columns are float64, the declared
    categorical ones matched on the workers as the numpy engine's readers match them
    (:func:`dpsynth_core.tabular.normalise_partition`, or :func:`~dpsynth_core.tabular.clean_partition`,
    which also drops the rows holding a bad cell)."""
    import dask.dataframe as dd

    label = f"The input {args.input!r} ({len(files)} {kind} file{'s' if len(files) > 1 else ''})"
    drop_bad = bool(getattr(args, "drop_bad_rows", False))
    csv_kw, numeric_like = _csv_options(files, label) if kind == "CSV" else ({}, frozenset())
    with _reading(label):
        frame = dd.read_csv(files, **csv_kw) if kind == "CSV" else dd.read_parquet(files)
    dtypes = {str(c): frame.dtypes[c] for c in frame.columns}
    used, cats, other = _columns_used(args, dtypes, options, label, kind, numeric_like)
    numeric = [c for c in used if c not in cats]
    with _reading(label):
        if kind == "CSV" and drop_bad:  # every cell as text: the workers classify them as the numpy engine does
            frame = dd.read_csv(files, usecols=used, dtype="str", keep_default_na=False, include_path_column=_PATH,
                                **csv_kw)
        elif kind == "CSV":  # read again with only those columns: numbers as float64 in every block, categories as text
            frame = dd.read_csv(files, usecols=used, dtype={c: ("str" if c in cats else "float64") for c in used},
                                keep_default_na=False, na_values={c: _na_tokens() for c in numeric}, **csv_kw)
        else:
            frame = dd.read_parquet(files, columns=[c for c in frame.columns if str(c) in used])
    if any(not isinstance(c, str) for c in frame.columns):
        frame.columns = [str(c) for c in frame.columns]
    drop, summary = getattr(args, "drop_missing", False), None
    if drop_bad:
        frame, summary = _bad_rows_plan(frame, kind, numeric, used, cats, other, csv_kw.get("decimal", "."),
                                        csv_kw.get("sep", ","))
    elif cats:
        frame = frame[used]
        meta = pd.DataFrame({c: pd.Series(dtype=category_dtype(cats[c]) if c in cats else "float64")
                             for c in used}, columns=used)
        if kind == "Parquet":
            meta = meta.astype({c: frame.dtypes[c] for c in numeric})
        tokens = MISSING_TOKENS if kind == "CSV" else PARQUET_MISSING_TOKENS
        frame = frame.map_partitions(normalise_partition, cats, other, tokens, label, not drop, meta=meta)
    else:
        frame = frame[used]
    if drop:
        frame = frame.dropna()  # lazily; the number of rows dropped is not counted (it would take a pass)
    cat_words = f" and categorical column(s) {', '.join(repr(c) for c in cats)}" if cats else ""
    say(args, f"{args.input}: {len(files)} {kind} file(s), read lazily in {frame.npartitions} partition(s); using "
               f"{'numeric ' if cats else ''}column(s) {', '.join(repr(c) for c in numeric)}{cat_words}")
    return frame, used, summary


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
        raise ValueError(f"The 'memory-limit' parameter of {PROG} synth must be 'auto' or a size per worker such "
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
    import dask
    import dask.utils

    if args.scheduler:
        from distributed import Client

        say(args, f"connecting to the Dask scheduler at {args.scheduler}")
        try:
            client = Client(args.scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise OSError(f"could not connect to the Dask scheduler at {args.scheduler!r} within {CONNECT_TIMEOUT} s "
                          f"({type(exc).__name__}: {one_line(exc)})") from None
        try:
            if not client.nthreads():
                say(args, f"waiting up to {CONNECT_TIMEOUT} s for a worker to join the cluster")
                try:
                    client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
                except (OSError, TimeoutError):
                    raise OSError(f"the Dask scheduler at {args.scheduler!r} has no worker (none joined within "
                                  f"{CONNECT_TIMEOUT} s)") from None
            threads = client.nthreads()
            say(args, f"using the Dask cluster at {args.scheduler}: {len(threads)} worker(s), "
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
        say(args, f"computing with Dask's local {local!r} scheduler ({SCHEDULER_ENV})")
        count = _TaskCount()
        with dask.config.set(scheduler=local), _local_counter(count):
            yield count
        return
    from distributed import Client, LocalCluster

    workers = _cores() if args.workers is None else int_arg(args.workers, "workers", f"{PROG} synth")
    if workers < 1:
        raise ValueError(f"The 'workers' parameter of {PROG} synth must be an int in [1, inf). Got {workers}.")
    limit = _memory_limit(args.memory_limit, workers)
    say(args, f"starting a local Dask cluster: {workers} worker process(es), 1 thread each, memory limit "
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


#: Bytes of CSV read again, at most, to find the row and column of a cell that is not a number (only after
#: the Dask read failed on one: the workers' error does not say where it is).
LOCATE_MAX_BYTES = 256 * 2**20


def _locate_bad_cell(files: Sequence[str], columns: Sequence[str]) -> CSVError | None:
    """The numpy engine's error (file, row, column; no cell quoted) for the first cell of ``columns`` that is
    not a number, reading the CSV ``files`` in order with the library's reader within :data:`LOCATE_MAX_BYTES`
    in all (it stops at the first file that would pass the budget); None if none is found within it."""
    budget = LOCATE_MAX_BYTES
    for f in files:
        size = os.path.getsize(f)
        if size > budget:
            return None
        budget -= size
        try:
            read_table(f, columns=list(columns), missing="drop", max_bytes=size + 1, max_rows=10**9,
                       what=f"the input file {os.path.basename(f)!r}")
        except CSVError as err:
            if err.kind in ("not_a_number", "decimal", "infinite", "text_column") and err.row is not None:
                return err
    return None


def _dask_value_error(exc: Exception, args: argparse.Namespace, names: Sequence[str],
                      files: Sequence[str] = (), kind: str = "CSV") -> Exception:
    """A clearer message for a bad value met while the workers read the files (never quoting a cell):
    ``exc`` itself, or a :class:`WorkerError` caused by it; any other error is returned as it is. For a cell
    that is not a number in CSV ``files``, the file, row and column are found by :func:`_locate_bad_cell`."""
    cause = exc.__cause__ if isinstance(exc, WorkerError) else exc
    if not isinstance(cause, ValueError):
        return exc
    text = str(cause)
    if isinstance(cause, CSVError) and "missing value" in text and not getattr(args, "drop_missing", False):
        return ValueError(f"{text.rstrip('.')} (add --drop-missing to drop them).")
    if "could not convert string to float" in text or "Unable to parse string" in text:
        found = _locate_bad_cell(files, names) if kind == "CSV" and files and names else None
        if found is not None:
            return ValueError(f"{str(found).rstrip('.')} (add --drop-bad-rows to drop such rows; --columns chooses the "
                              f"columns read).")
        return ValueError(f"The input {args.input!r}: a cell of the column(s) used holds text, not a number; add "
                          f"--drop-bad-rows to drop the rows that hold such cells, or choose columns that hold plain "
                          f"numbers (a dot as decimal mark) with --columns.")
    if "must contain only finite values" in text:
        found = re.search(r"column (?:'([^']*)'|(\d+))", text)  # by name (a partition's frame) or by position
        col = None if found is None else found.group(1) if found.group(1) is not None else (
            names[int(found.group(2))] if int(found.group(2)) < len(names) else None)
        where = f" in column {col!r}" if col is not None else ""
        hint = "" if getattr(args, "drop_missing", False) else " (add --drop-missing to drop rows with a missing value"
        hint += ("; " if hint else " (") + "add --drop-bad-rows to drop rows with an infinite value)"
        return ValueError(f"The input {args.input!r} has a missing or infinite value{where}; every value of the "
                          f"columns used must be a finite number{hint}.")
    return exc


#: The column the dask engine's CSV reader adds for --drop-bad-rows (the file of each row, to say where).
_PATH = "__dpsynth_path__"


def _bad_rows_plan(raw, kind: str, numeric: list[str], used: list[str], cats, other, decimal: str, delimiter: str):
    """``--drop-bad-rows`` with the dask engine: the lazy frame without the rows holding a bad cell
    (:func:`~dpsynth_core.tabular.clean_partition`, the numpy engine's rules) and the lazy per-partition
    summary that counts and locates them (one more pass over the files, computed before the release)."""
    tokens = MISSING_TOKENS if kind == "CSV" else PARQUET_MISSING_TOKENS
    meta = pd.DataFrame({c: pd.Series(dtype=category_dtype(cats[c]) if c in cats else "float64") for c in used},
                        columns=used)
    rules = (numeric, cats, other, tokens, decimal, delimiter, used)
    frame = raw.map_partitions(clean_partition, *rules, meta=meta)
    summary = raw.map_partitions(bad_rows_summary, *rules, _PATH if kind == "CSV" else None, meta=SUMMARY_META)
    return frame, summary


def _say_bad_rows(summary: pd.DataFrame, files: Sequence[str]) -> None:
    """The count and the first locations of the rows dropped for a bad cell, from the partitions' summaries:
    a CSV file's rows as a spreadsheet numbers them (the header is row 1; blank lines, which Dask's reader
    skips, are not counted), a Parquet file's data rows from 1 (in each partition when a file was split). A count of the private data: a warning for the owner, in no output."""
    offsets: dict[str, int] = {}
    where: list[tuple[int, str, str]] = []
    one_per_file = len(summary) == len(files)
    csv = bool(len(summary)) and bool(summary["path"].iloc[0])  # CSV rows are numbered as a spreadsheet does
    for k, part in enumerate(summary.itertuples(index=False)):
        path = os.path.basename(part.path or (files[k] if one_per_file else f"partition {k + 1}"))
        offset = offsets.get(path, 0)
        where += [(offset + int(i) + (2 if csv else 1), str(col), path) for i, col in json.loads(part.where)]
        offsets[path] = offset + int(part.rows)
    count = int(summary["bad"].sum())
    if count:
        warn(BadRows(count, tuple(where[:5])).note("row" if csv else "data row"))


def synth_dask(args: argparse.Namespace, spec) -> int:
    """``synth --engine dask``: the files read lazily, the statistic summed by Dask, one release."""
    try:
        import dask.dataframe  # noqa: F401 - the engine's dependency, checked before anything else
        import distributed  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"The dask engine needs Dask: pip install 'dask[dataframe,distributed]' pyarrow "
                         f"({exc}).") from None
    files, kind = _dask_files(args.input)
    check_not_input(args, files)
    owner = f"{PROG} synth"
    options, mechanism, seed, max_rows = synth_settings(args, spec, owner)  # -m auto: mechanism None
    names: list[str] = []
    try:
        frame, used, summary = _dask_frame(args, files, kind, options)
        domain = domain_from_args(args, used, owner=owner, options=options)
        mechanism = mechanism_for(args, mechanism, domain)
        spec = mechanism.spec
        names = list(domain.numeric_names)  # a non-finite value is reported by its index among these
        if not domain.declared:
            warn("the domain says its bounds or categories were read off the data (provenance 'data'): no release "
                 "on it is differentially private, and its outputs say so.")
        with _dask_compute(args) as count:
            if summary is not None:  # --drop-bad-rows: one pass that counts and locates them, before the release
                say(args, "counting the rows with a bad cell (one pass over the files)")
                _say_bad_rows(summary.compute(), files)
            say_running(args, spec, mechanism, domain, seed)
            with (Heartbeat(args, spec.name, progress=count.text if count is not None else None) as hb,
                  row_limit(max_rows, domain.d)):
                release = mechanism(frame, domain, rng=seed)
    except (ValueError, WorkerError) as exc:
        clearer = _dask_value_error(exc, args, names, files, kind)
        if clearer is exc:
            raise
        raise clearer from exc
    tasks = f", {count.done} Dask tasks" if count is not None and count.done else ""
    say(args, f"{spec.name} done in {hb.seconds:.2f} s{tasks}: {release.privacy}")
    # the count the mechanism made in its pass (no second pass over the data): the library's decision
    warn_clamping(clamping_of_release(release), args)
    write_release(args, release, seed)
    return 0

"""The ``dpsynth`` command: differentially private synthetic data from a CSV file.

::

    dpsynth list [-v]
    dpsynth synth --mechanism NAME --epsilon E [--delta D] DOMAIN [--param key=value ...]
                  [--neighbours R] [--n-public N] [--drop-missing] [--drop-bad-rows] [--seed S]
                  [--engine numpy|dask] [--scheduler ADDRESS] [--workers N] [--memory-limit SIZE]
                  IN -o OUT.csv [--report OUT.json]
    dpsynth w1 DATA.csv SYNTHETIC.csv DOMAIN [--metric linf] [--method auto] [--max-seconds S] [--json]
               [--drop-missing] [--drop-bad-rows]
    dpsynth report REAL.csv SYNTHETIC.csv DOMAIN [--target COL] [--holdout HOLDOUT.csv]
                   [--w1 auto|none|W] [--bins N] [--pair-bins N] [--seed S] [-o REPORT.json]
                   [--drop-missing] [--drop-bad-rows]

    DOMAIN:  --bounds "lo:hi,lo:hi" [--categories "sex=F|M;region=north|south"] [--integers a,b]
             [--columns a,b]
         or  --domain DOMAIN.json   (a domain file, or a report holding a "domain" block)

The public domain's options and their rules are :func:`._common.add_domain_options` and
:data:`._common.DOMAIN_HELP` (shown by ``--help``): ``--bounds`` covers the numeric columns,
``--categories`` declares the categorical ones (read as text and matched exactly against the
declared categories; an undeclared value is an error naming its row, column and value), and a JSON
domain file (:meth:`Domain.from_dict <dpsynth_core.Domain.from_dict>`) declares every column instead.
``dpsynth synth`` writes categorical columns back as their declared labels. ``dpsynth w1`` and
``dpsynth report`` compare tables with categorical columns under the mixed metric (docs/mixed-data.md).

Parameters of ``--param`` come from the registry schema (:class:`~dpsynth_core.schema.ParamSpec`);
the mechanism is bound once with :func:`~dpsynth_core.mechanisms.bind`. Bounds are public inputs:
they are never derived from the data. The synthetic CSV lists its rows in random order; the report
(``--report``) is :func:`dpsynth_core.export.public_report`, so it contains only differentially
private values. Without ``--seed`` the noise comes from fresh operating-system entropy; with it the
run is reproducible and its report is labelled "reproducible, not private". Files are read by
:func:`dpsynth_core.tabular.read_table` (separator and decimal comma detected, bad cells reported by
row and column, never a silent misread; ``--drop-bad-rows`` drops their rows instead). Nothing of the
input is printed, except warnings for the data owner's eyes: rows dropped (how many and where), and the
library's clamping decision (:mod:`dpsynth_core.clamping`: more than 1% of the rows outside the bounds; the
release goes ahead). An ε above 10 gets the library's warning (:func:`dpsynth_core.privacy.weak_epsilon_note`).
A library result or error that advises an option (:class:`dpsynth_core.validation.Advice`) is worded here
as the flag (:data:`._common.CLI_OPTIONS`). ``w1`` and ``report`` answer at every size the readers accept
(:func:`dpsynth_core.transport.plan_w1`: exact, or a certified interval, said on stderr) and read a synthetic
file as large as ``synth`` writes. Errors are one line on
stderr with exit code 2 (usage) or 1 (invalid data or parameters); ``--debug`` shows tracebacks.

Engines. ``--engine numpy`` (the default) reads one CSV or Parquet file into memory, within the limits
of :func:`~dpsynth_core.tabular.read_table` and :func:`~dpsynth_core.tabular.read_parquet` (50 MB,
200,000 rows). ``--engine dask`` reads a glob or a
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

``report`` compares the private and the synthetic data (:func:`dpsynth_core.evaluate.report`): an owner
view computed from the private data without noise, printed for the data owner and written as JSON with
``-o``; never a release.

Modules: :mod:`._commands` (the commands, the parser, :func:`main`, the numpy engine),
:mod:`._dask` (the dask engine), :mod:`._report` (the ``report`` command), :mod:`._common` (what both share: messages, the heartbeat, the
parsing of the arguments, the all-or-nothing outputs). ``python -m dpsynth_core.cli`` runs
:func:`main` (:mod:`.__main__`).
"""

from __future__ import annotations

from ._commands import build_parser, main
from ._dask import SCHEDULER_ENV

__all__ = ["main", "build_parser", "SCHEDULER_ENV"]

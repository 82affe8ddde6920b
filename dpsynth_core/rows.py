"""How a mechanism reads the private rows: sums of per-record statistics, in memory or through Dask.

Every mechanism here touches the private data only through statistics that are sums over records:
counts on a grid or a hierarchical partition (PMM, PSMM, the flat histogram, the walk), marginal
counts (sparse marginals), the count, sum and sum of outer products (low_dim), nearest-neighbour
votes over the current candidates (Private Evolution). :class:`Rows` holds the private data (a NumPy
array in memory, or a Dask array or Dask DataFrame that need not fit in memory) and computes such a
sum with :meth:`Rows.sum`: the statistic of each block, added up by one merge, :func:`merge`.

* In memory the whole array is one block: the statistic is called once on it, exactly as before
  (no copy, no scheduler, no overhead).
* With Dask each partition is a block: the statistic runs on the workers, the partial sums are
  added in a tree, and only the merged statistic (a few arrays of counts) reaches the client.
  Noise is then added once, on the client, by the mechanism.

Statistics are integers (counts, votes, or low_dim's exact integer moments), so their sum
does not depend on how the rows are split: with the same rng a mechanism releases bit for bit the
same output whether X is a NumPy array or a Dask collection in any number of partitions.

Bounds stay public inputs: nothing here computes a minimum, a maximum or a quantile of the data.
Each block goes through the same checks as an in-memory X (finite, numeric, the domain's columns)
and the same clamping into the domain (:meth:`Domain.to_unit`).

See docs/scale.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .validation import param_error

__all__ = ["Rows", "is_dask", "merge", "WorkerError"]


class WorkerError(RuntimeError):
    """A Dask worker failed while computing a statistic; nothing was released."""


def is_dask(X: Any) -> bool:
    """True when ``X`` is a Dask collection (array or DataFrame), without importing Dask otherwise."""
    mod = type(X).__module__ or ""
    if not mod.startswith("dask"):
        return False
    try:
        import dask
    except ImportError:  # pragma: no cover - a dask object implies dask is importable
        return False
    return bool(dask.is_dask_collection(X))


def merge(a: Any, b: Any) -> Any:
    """Add two partial statistics: numbers and arrays by ``+``, tuples, lists and dicts entry by entry.

    The one merge of every mechanism's statistic (they are all sums over records)."""
    if isinstance(a, tuple):
        return tuple(merge(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, list):
        return [merge(x, y) for x, y in zip(a, b, strict=True)]
    if isinstance(a, dict):
        return {k: merge(a[k], b[k]) for k in a}
    if a is None:
        return None
    return a + b


def _block_stat(block: Any, spec: dict, stat: Callable, args: tuple) -> tuple:
    """Run on a worker: check one block as an in-memory X is checked, map it, compute its statistic.

    Returns (statistic, rows, rows clamped into the last domain when ``spec["unit"]``)."""
    owner, domain = spec["owner"], spec["domain"]
    arr = domain.read(block, name="X", owner=owner, min_rows=0)
    for fn, fargs, out_domain in spec["maps"]:
        arr = fn(domain.to_unit(arr, owner=owner), *fargs)
        domain = out_domain
    n_clamped = 0
    if spec["unit"]:
        arr, n_clamped = domain.to_unit(arr, return_clamped=True, owner=owner)
    return stat(arr, *args), int(arr.shape[0]), n_clamped


def _merge3(a: tuple, b: tuple) -> tuple:
    return merge(a[0], b[0]), a[1] + b[1], a[2] + b[2]


class Rows:
    """The private rows a mechanism reads: in memory or a Dask collection.

    Parameters
    ----------
    X : array (n, d), DataFrame, Dask array (n, d) or Dask DataFrame
    domain : Domain
        Public bounds; each block is clamped into it.
    owner : str
        The mechanism's name, for messages.
    min_rows : int

    Dask collections are computed with Dask's current scheduler: ``dask.config`` or the active
    ``distributed.Client`` (the command line sets one up; a library user creates their own).

    In memory, X is checked at once and ``U`` (the unit-cube copy) is computed on first use, exactly
    as mechanisms always did. With Dask nothing is read until a statistic is asked for; ``n`` costs one
    pass over the partition lengths (free for arrays with known chunks) and ``n_clamped`` is filled
    in by the first pass that maps rows into the unit cube.
    """

    def __init__(self, X: Any, domain: Any, *, owner: str, min_rows: int = 1,
                 _maps: Sequence = (), _U: np.ndarray | None = None) -> None:
        self.domain = domain
        self._source_domain = domain
        self.owner = owner
        self._maps = tuple(_maps)
        self._n: int | None = None
        self._n_clamped: int | None = None
        self.dask = is_dask(X)
        self._U = _U
        if self.dask:
            self._X = _select_columns(X, domain, owner)
            self.raw = None
            if min_rows > 0 and self.n < min_rows:
                raise param_error(owner, "X", f"a table with at least {min_rows} row(s)", f"{self.n} rows")
        elif _U is not None:
            self._X = None
            self.raw = None
            self._n = int(_U.shape[0])
        else:
            self._X = None
            self.raw = domain.read(X, name="X", owner=owner, min_rows=min_rows)
            self._n = int(self.raw.shape[0])

    @property
    def U(self) -> np.ndarray | None:
        """The rows in the unit cube (in memory; computed once, on first use). None with Dask."""
        if self._U is None and self.raw is not None:
            self._U, self._n_clamped = self.domain.to_unit(self.raw, return_clamped=True, owner=self.owner)
        return self._U

    # ------------------------------------------------------------------ sizes (owner-side)
    @property
    def n(self) -> int:
        """Number of rows (owner-side: released only under replace, where n is public)."""
        if self._n is None:
            self._n = _dask_len(self._X, self.owner)
        return self._n

    @property
    def n_clamped(self) -> int:
        """Rows with a coordinate outside the domain (owner-side diagnostic, never released)."""
        if self._n_clamped is None:
            if not self.dask:
                self.U  # noqa: B018 - computes the unit copy and the clamped count
            else:
                self.sum(_nothing)  # one pass; also sets n
        return int(self._n_clamped)

    # ------------------------------------------------------------------ statistics
    def map(self, fn: Callable, *args: Any, domain: Any) -> Rows:
        """These rows mapped by ``fn(U_block, *args) -> array`` into ``domain``'s units (lazily with Dask).

        ``fn`` gets a block in the unit cube of this domain and must act row by row (a projection, a
        change of coordinates), so that the mapped rows of a block are the block's rows mapped. The
        result's rows are clamped into ``domain`` (its ``n_clamped`` counts them). low_dim hands the
        projected points to PMM/PSMM this way."""
        if not self.dask:
            return Rows(fn(self.U, *args), domain, owner=self.owner, min_rows=0)
        out = Rows.__new__(Rows)
        out.__dict__.update(self.__dict__)
        out._maps = self._maps + ((fn, args, domain),)
        out._source_domain = self._source_domain
        out.domain = domain
        out._n_clamped = None
        return out

    def sum(self, stat: Callable, *args: Any, unit: bool = True) -> Any:
        """``stat`` summed over the rows: ``merge`` of ``stat(block, *args)`` over the blocks.

        ``stat(block, *args)`` gets the rows of one block (in the unit cube when ``unit``, else in the
        domain's units, checked and finite) and returns a number, an integer array, or a tuple, list
        or dict of them, that adds up over disjoint blocks (:func:`merge`). It must be exactly
        additive (integers), so that the sum does not depend on the
        partitioning. In memory it is called once, on all the rows.
        """
        if not self.dask:
            return stat(self.U if unit else self.raw, *args)
        return self._dask_sum(stat, args, unit=unit)

    def to_numpy(self, *, max_rows: int, why: str) -> np.ndarray:
        """All the rows in the unit cube as one array, refused above ``max_rows`` (checked before
        anything is read). For outputs the size of the input (the per-point Laplace baseline)."""
        if not self.dask:
            return self.U
        if self.n > max_rows:
            raise param_error(self.owner, "X", f"at most {max_rows} rows ({why})", f"{self.n} rows")
        import dask

        block = dask.delayed(_block_rows, pure=True)
        spec = self._spec(unit=True)
        try:
            blocks = dask.compute(*[block(p, spec) for p in _partitions(self._X)])
        except (ValueError, TypeError):
            raise
        except Exception as exc:
            raise _worker_error(self.owner, exc) from exc
        self._n_clamped = int(sum(c for _, c in blocks))
        arrays = [b for b, _ in blocks]
        return np.concatenate(arrays, axis=0) if arrays else np.empty((0, self.domain.d))

    # ------------------------------------------------------------------ Dask
    def _spec(self, *, unit: bool) -> dict:
        src = self._source_domain
        return {"owner": self.owner, "domain": src, "unit": unit, "maps": self._maps}

    def _dask_sum(self, stat: Callable, args: tuple, *, unit: bool) -> Any:
        import dask

        spec = self._spec(unit=unit)
        parts = _partitions(self._X)
        block = dask.delayed(_block_stat, pure=True)
        # the arguments (e.g. Private Evolution's candidates) are one task of the graph, shipped once to
        # each worker, not copied into every partition's task
        shared = dask.delayed(tuple, pure=True)(list(args)) if args else ()
        tasks = [block(p, spec, stat, shared) for p in parts]
        if not tasks:
            raise param_error(self.owner, "X", "a table with at least one partition", "none")
        join = dask.delayed(_merge3, pure=True)
        while len(tasks) > 1:  # a balanced tree of merges: depth log2(partitions)
            nxt = [join(tasks[i], tasks[i + 1]) for i in range(0, len(tasks) - 1, 2)]
            if len(tasks) % 2:
                nxt.append(tasks[-1])
            tasks = nxt
        try:
            (value, n_rows, n_clamped), = dask.compute(tasks[0])
        except (ValueError, TypeError):
            raise  # the block checks: the same message as for an in-memory X
        except Exception as exc:  # a worker died, a file vanished, the cluster went away
            raise _worker_error(self.owner, exc) from exc
        self._n = int(n_rows)
        if unit:
            self._n_clamped = int(n_clamped)
        return value


def _nothing(U: np.ndarray) -> int:
    return 0


def _block_rows(block: Any, spec: dict) -> tuple:
    """Run on a worker: one block's rows (checked, mapped, in the unit cube) and how many were clamped."""
    (rows, _, n_clamped) = _block_stat(block, spec, _identity, ())
    return rows, n_clamped


def _identity(U: np.ndarray) -> np.ndarray:
    return U


def _worker_error(owner: str, exc: BaseException) -> WorkerError:
    return WorkerError(f"{owner}: a Dask worker failed while reading the private rows ({type(exc).__name__}: "
                       f"{exc}). Nothing was released; fix the cause and run again.")


def _is_array(X: Any) -> bool:
    return hasattr(X, "chunks") and hasattr(X, "ndim")


def _select_columns(X: Any, domain: Any, owner: str) -> Any:
    """A Dask array with one chunk across the columns, or the domain's columns of a Dask DataFrame."""
    if _is_array(X):
        if X.ndim == 1 and domain.d == 1:
            X = X.reshape((-1, 1))
        if X.ndim != 2 or X.shape[1] != domain.d:
            raise param_error(owner, "X", f"an array of shape (n, {domain.d}) matching the domain",
                              f"a Dask array of shape {X.shape}")
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        return X
    cols = list(domain.names)
    missing = [c for c in cols if c not in X.columns]
    if missing:
        raise ValueError(f"The 'X' parameter of {owner} must have the columns {cols}. Got a table without "
                         f"{missing}.")
    return X[cols]


def _partitions(X: Any) -> list:
    if _is_array(X):
        return list(X.to_delayed().ravel())
    return list(X.to_delayed())


def _dask_len(X: Any, owner: str) -> int:
    import dask

    if _is_array(X):
        rows = X.chunks[0]
        if all(not (isinstance(c, float) and math.isnan(c)) for c in rows):
            return int(sum(rows))
        lengths = X.map_blocks(lambda b: np.array([b.shape[0]]), chunks=(1,), drop_axis=1, dtype=np.int64)
        return int(lengths.sum().compute())
    try:
        return int(dask.compute(X.shape[0])[0])
    except (ValueError, TypeError):
        raise  # a bad cell or column: the reader's own message, as for any block
    except Exception as exc:
        raise WorkerError(f"{owner}: could not count the rows of the table ({type(exc).__name__}: {exc}). "
                          "Nothing was released.") from exc

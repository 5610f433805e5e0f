"""The approximate FlyHash index: multi-probe buckets on short pseudo-hashes of the fly code,
exact re-ranking of the candidates, one knob (``probes``) trading recall for speed."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Tuple

import numpy as np

from . import _neurobits
from ._base import as_int, as_rows, config_json, filled, neighbours

_HASH_KEYS = ("code_bits", "ones_per_row", "winners", "seed", "wta")
_ANN_KEYS = ("tables", "key_bits", "pool", "probes", "rerank")


def _probes(probes: Any) -> int:
    return as_int(probes, "probes")


class FlyHashApproxIndex:
    """An approximate FlyHash index, as faiss users know one (``train``, ``add``,
    ``search(X, k)``, ``save``/``load``, ``nprobe``-style knob).

    Each vector gets ``tables`` bucket keys of ``key_bits`` bits (sum-pooled outputs of the fly
    projection against learned medians, DenseFly's pseudo-hash). A search reads the ``probes``
    buckets nearest each query's key in every table and re-ranks the ids found exactly.

    Parameters
    ----------
    code_bits, ones_per_row, winners, seed, wta
        The index's FlyHash, as for :class:`FlyHash` (``winners`` defaults to m/20).
    tables : int, default=8
        Pseudo-hash tables.
    key_bits : int, default=12
        Bits of a bucket key (``2**key_bits`` buckets per table).
    pool : int, default=4
        Projection outputs summed into one key bit.
    probes : int, default=16
        Buckets read per table (1 to ``2**key_bits``; at the maximum the search is exact).
    rerank : {"hamming", "euclidean"}, default="hamming"
        Re-rank candidates by the Hamming distance of their fly codes, or by the squared
        Euclidean distance of the vectors (the index then keeps them).
    device : str, default="cpu"
        Where hashing and searching run: ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"auto"``, or
        ``"gpus"`` / ``"gpus:N"`` (the ids sharded over every GPU / the first N). On GPUs the
        candidates are found on the host and re-ranked on the device: the same ids and distances.

    Examples
    --------
    >>> import numpy as np
    >>> from neurobits import FlyHashApproxIndex
    >>> X = np.random.default_rng(0).random((200, 32), dtype=np.float32)
    >>> index = FlyHashApproxIndex(code_bits=256, winners=16, tables=4, key_bits=6, rerank="euclidean")
    >>> index.add(X)
    range(0, 200)
    >>> distances, ids = index.search(X[:3], k=2, probes=64)
    >>> ids[:, 0]
    array([0, 1, 2])
    """

    def __init__(
        self,
        code_bits: Optional[int] = None,
        ones_per_row: Optional[int] = None,
        winners: Optional[int] = None,
        seed: int = 1,
        wta: str = "exact",
        tables: int = 8,
        key_bits: int = 12,
        pool: int = 4,
        probes: int = 16,
        rerank: str = "hamming",
        device: str = "cpu",
    ) -> None:
        self.code_bits = code_bits
        self.ones_per_row = ones_per_row
        self.winners = winners
        self.seed = seed
        self.wta = wta
        self.tables = tables
        self.key_bits = key_bits
        self.pool = pool
        self.probes = probes
        self.rerank = rerank
        self.device = device
        self._index: Any = None

    def _ann_json(self) -> str:
        import json

        return json.dumps(
            {
                "tables": self.tables,
                "bits": self.key_bits,
                "pool": self.pool,
                "probes": _probes(self.probes),
                "rerank": self.rerank,
            }
        )

    def _make(self, d: int) -> Any:
        return _neurobits.FlyAnnIndex(config_json({k: getattr(self, k) for k in _HASH_KEYS}), self._ann_json(), d)

    def train(self, X: Any) -> None:
        """Learn the bucket thresholds from ``X`` without adding it (an empty index only; an
        untrained index learns them from its first ``add``).

        Parameters
        ----------
        X : array-like of shape (n_samples, d)
        """
        X = as_rows(X, np.float32, "the vectors")
        if self._index is None:
            self._index = self._make(X.shape[1])
        self._index.train(X)

    def add(self, X: Any) -> range:
        """Hash the rows of ``X`` and file them in the buckets; ids continue from ``ntotal``.
        Nothing is rebuilt; a refused ``add`` adds nothing.

        Parameters
        ----------
        X : array-like of shape (n_samples, d)

        Returns
        -------
        range
            The ids of the added vectors.
        """
        X = as_rows(X, np.float32, "the vectors")
        if self._index is None:
            self._index = self._make(X.shape[1])
        start, end = self._index.add(X, self.device)
        self._on = self.device
        return range(start, end)

    def search(self, X: Any, k: int = 10, probes: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest indexed vectors of each row of ``X`` among the candidates of the
        ``probes`` buckets per table.

        Parameters
        ----------
        X : array-like of shape (n_queries, d)
        k : int, default=10
        probes : int, optional
            Buckets read per table (default: the ``probes`` given at construction).

        Returns
        -------
        distances : ndarray of float32, shape (n_queries, k)
            Hamming or squared Euclidean distances, nearest first (ties by lower id); +inf pads.
        ids : ndarray of int64, shape (n_queries, k)
            −1 pads missing neighbours (as faiss does).
        """
        index = self._require()
        X = as_rows(X, np.float32, "the queries")
        k = neighbours(k)
        p = _probes(self.probes if probes is None else probes)
        if self.__dict__.get("_on") != self.device:
            # Briefly exclusive; the search itself takes the index shared.
            index.set_device(self.device)
            self._on = self.device
        return index.search(X, k, p)

    def _require(self) -> Any:
        return filled(self._index)

    @property
    def ntotal(self) -> int:
        """Vectors held."""
        return 0 if self._index is None else len(self._index)

    def __len__(self) -> int:
        return self.ntotal

    def save(self, path: "os.PathLike[str] | str") -> None:
        """Write the index to ``path`` atomically (as ``flyhash index build --approx`` does)."""
        self._require().save(os.fspath(path))

    @classmethod
    def load(cls, path: "os.PathLike[str] | str", device: str = "cpu") -> "FlyHashApproxIndex":
        """Read an index written by :meth:`save` or by the command line."""
        return cls._of(_neurobits.FlyAnnIndex.load(os.fspath(path)), device)

    @classmethod
    def _of(cls, index: Any, device: str) -> "FlyHashApproxIndex":
        import json

        c, a = json.loads(index.config_json), json.loads(index.ann_json)
        out = cls(
            **{k: c[k] for k in _HASH_KEYS},
            tables=a["tables"],
            key_bits=a["bits"],
            pool=a["pool"],
            probes=a["probes"],
            rerank=a["rerank"],
            device=device,
        )
        out._index = index
        return out

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_on", None)  # a loaded index starts on its default device
        index = state.pop("_index")
        state["_index_bytes"] = None if index is None else bytes(index.to_bytes())
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        state = dict(state)
        data = state.pop("_index_bytes", None)
        self.__dict__.update(state)
        self._index = None if data is None else _neurobits._from_bytes("flyhash-ann", data)

    def __repr__(self) -> str:
        return (
            f"FlyHashApproxIndex(ntotal={self.ntotal}, tables={self.tables}, key_bits={self.key_bits}, "
            f"probes={self.probes}, rerank={self.rerank!r})"
        )

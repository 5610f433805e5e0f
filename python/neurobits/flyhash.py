"""FlyHash (a transformer into sparse binary codes) and the FlyHash index (exact Hamming
search, as faiss users know one)."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Tuple

import numpy as np

from . import _neurobits
from ._base import HAVE_SKLEARN, Estimator, TransformerMixin, as_rows, config_json, filled, neighbours

_HASH_KEYS = ("code_bits", "ones_per_row", "winners", "seed", "wta")


def unpack(codes: np.ndarray, m: int) -> np.ndarray:
    """Packed codes (``uint64`` words, bit ``i`` in word ``i // 64``) as an ``n × m`` boolean
    matrix.

    Parameters
    ----------
    codes : ndarray of uint64, shape (n, ceil(m / 64))
        Codes as :meth:`FlyHash.transform` returns them with ``output="packed"``.
    m : int
        Bits per code.

    Returns
    -------
    ndarray of bool, shape (n, m)
    """
    words = np.ascontiguousarray(codes, dtype="<u8")
    bits = np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")
    return bits[:, :m].astype(bool)


def _hash_config(est: Any) -> Dict[str, Any]:
    return {k: getattr(est, k) for k in _HASH_KEYS}


class FlyHash(TransformerMixin, Estimator):
    """FlyHash: a sparse binary random projection followed by a winner-take-all, giving each
    vector a sparse binary code (Dasgupta, Stevens & Navlakha 2017).

    Parameters
    ----------
    code_bits : int or None, default=None
        Code length m; ``None``: 32·d, d the input dimension seen by ``fit``.
    ones_per_row : int or None, default=None
        Inputs sampled by each projection row, s; ``None``: 5 % of d (at least 1).
    winners : int or None, default=None
        Ones per code, k; ``None``: m/20.
    seed : int, default=1
        Seed of the projection (the same projection on every target).
    wta : {"exact", "bisect64"}, default="exact"
        Winner-take-all: exactly k winners (ties to the lower index), or the 64-step bisection.
    output : {"packed", "bool"}, default="packed"
        What ``transform`` returns: ``uint64`` words (bit ``i`` in word ``i // 64``) or an
        ``n × m`` boolean matrix.
    device : str, default="cpu"
        Where ``transform`` runs: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``.

    Attributes
    ----------
    n_features_in_ : int
        Input dimension d.
    code_bits_, ones_per_row_, winners_ : int
        The resolved m, s and k.

    Examples
    --------
    >>> import numpy as np
    >>> from neurobits import FlyHash
    >>> X = np.random.default_rng(0).random((5, 16), dtype=np.float32)
    >>> codes = FlyHash(code_bits=64, winners=4).fit_transform(X)
    >>> codes.shape, codes.dtype
    ((5, 1), dtype('uint64'))
    """

    _rust = _neurobits.FlyHash
    _kind = "flyhash"

    def __init__(
        self,
        code_bits: Optional[int] = None,
        ones_per_row: Optional[int] = None,
        winners: Optional[int] = None,
        seed: int = 1,
        wta: str = "exact",
        output: str = "packed",
        device: str = "cpu",
    ) -> None:
        self.code_bits = code_bits
        self.ones_per_row = ones_per_row
        self.winners = winners
        self.seed = seed
        self.wta = wta
        self.output = output
        self.device = device

    @classmethod
    def _params_of(cls, config: Dict[str, Any]) -> Dict[str, Any]:
        return {k: config[k] for k in _HASH_KEYS}

    def _set_fitted(self) -> None:
        d, m, s, k, _ = self._model.params
        self.n_features_in_ = int(d)
        self.code_bits_, self.ones_per_row_, self.winners_ = int(m), int(s), int(k)

    def fit(self, X: Any, y: Any = None) -> "FlyHash":
        """Fix the input dimension from ``X`` and draw the projection.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite values (only the shape is used, and the values are checked).
        y : None
            Ignored.

        Returns
        -------
        self : FlyHash
            The fitted transformer.
        """
        X = as_rows(X, np.float32, "the vectors")
        if self.output not in ("packed", "bool"):
            raise ValueError(f"output = {self.output!r}: expected 'packed' or 'bool'")
        model = self._rust(config_json(_hash_config(self)))
        model.fit(X)
        self._model = model
        self._set_fitted()
        return self

    def transform(self, X: Any) -> np.ndarray:
        """The codes of the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite values; a C-contiguous ``float32`` array is read in place (no copy), any
            other is converted once.

        Returns
        -------
        ndarray of uint64, shape (n_samples, ceil(m / 64)), or of bool, shape (n_samples, m)
            As ``output`` says.
        """
        model = self._check_fitted()
        X = as_rows(X, np.float32, "the vectors")
        codes = model.transform(X, self._device())
        if self.output == "bool":
            return unpack(codes, self.code_bits_)
        return codes

    @property
    def projection_(self) -> np.ndarray:
        """The projection: ``m`` rows of ``s`` ascending input indices (``uint32``)."""
        return self._check_fitted().projection()

    if HAVE_SKLEARN:

        def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
            tags = super().__sklearn_tags__()
            tags.transformer_tags.preserves_dtype = []  # codes are words or booleans
            tags.input_tags.allow_nan = False
            return tags


class FlyHashIndex:
    """An exact Hamming index of FlyHash codes, as faiss users know one: ``add`` vectors
    (hashed by the index's own FlyHash), ``search(queries, k)``, ``save``/``load``.

    Parameters
    ----------
    code_bits, ones_per_row, winners, seed, wta
        The index's FlyHash, as for :class:`FlyHash` (``winners`` defaults to m/20).
    device : str, default="cpu"
        Where hashing and search run: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurobits import FlyHashIndex
    >>> X = np.random.default_rng(0).random((100, 32), dtype=np.float32)
    >>> index = FlyHashIndex(code_bits=256, winners=16)
    >>> index.add(X)
    range(0, 100)
    >>> distances, ids = index.search(X[:3], k=2)
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
        device: str = "cpu",
    ) -> None:
        self.code_bits = code_bits
        self.ones_per_row = ones_per_row
        self.winners = winners
        self.seed = seed
        self.wta = wta
        self.device = device
        self._index: Any = None

    def add(self, X: Any) -> range:
        """Hash the rows of ``X`` and add their codes; ids continue from ``ntotal``.

        The first ``add`` fixes the input dimension and draws the projection. A refused or
        interrupted ``add`` adds nothing.

        Parameters
        ----------
        X : array-like of shape (n_samples, d)
            Finite values.

        Returns
        -------
        range
            The ids of the added vectors.
        """
        X = as_rows(X, np.float32, "the vectors")
        if self._index is None:
            self._index = _neurobits.FlyIndex(config_json(_hash_config(self)), X.shape[1])
        start, end = self._index.add(X, self.device)
        return range(start, end)

    def search(self, X: Any, k: int = 10) -> Tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest indexed codes of each row of ``X``, by Hamming distance (exact).

        Parameters
        ----------
        X : array-like of shape (n_queries, d)
            Query vectors.
        k : int, default=10
            Neighbours per query.

        Returns
        -------
        distances : ndarray of uint32, shape (n_queries, k)
            Hamming distances, nearest first (ties by lower id); ``2**32 - 1`` pads missing
            neighbours.
        ids : ndarray of int64, shape (n_queries, k)
            Ids of the neighbours; −1 pads missing ones (as faiss does).
        """
        index = self._require()
        X = as_rows(X, np.float32, "the queries")
        k = neighbours(k)
        return index.search(X, k, self.device)

    def _require(self) -> Any:
        return filled(self._index)

    @property
    def ntotal(self) -> int:
        """Codes held."""
        return 0 if self._index is None else len(self._index)

    def __len__(self) -> int:
        """Codes held (``ntotal``)."""
        return self.ntotal

    @property
    def d(self) -> Optional[int]:
        """Input dimension (``None`` before the first ``add``)."""
        return None if self._index is None else int(self._index.params[0])

    @property
    def codes(self) -> np.ndarray:
        """The codes held, ``ntotal × ceil(m / 64)`` ``uint64`` words."""
        return self._require().codes()

    def save(self, path: "os.PathLike[str] | str") -> None:
        """Write the index to ``path`` (atomically), as ``neurobits flyhash index build`` does.

        Parameters
        ----------
        path : str or path-like
            The index file.
        """
        self._require().save(os.fspath(path))

    @classmethod
    def load(cls, path: "os.PathLike[str] | str", device: str = "cpu") -> "FlyHashIndex":
        """Read an index written by :meth:`save` or by the command line.

        Parameters
        ----------
        path : str or path-like
            The index file.
        device : str, default="cpu"
            Where the loaded index computes.

        Returns
        -------
        FlyHashIndex
        """
        return cls._of(_neurobits.FlyIndex.load(os.fspath(path)), device)

    @classmethod
    def _of(cls, index: Any, device: str) -> "FlyHashIndex":
        import json

        c = json.loads(index.config_json)
        out = cls(**{k: c[k] for k in _HASH_KEYS}, device=device)
        out._index = index
        return out

    @staticmethod
    def append(path: "os.PathLike[str] | str", X: Any, device: str = "cpu") -> range:
        """Hash ``X`` with the index saved at ``path`` and append the codes to the file without
        rewriting it (under a file lock).

        Parameters
        ----------
        path : str or path-like
            An index file.
        X : array-like of shape (n_samples, d)
            Vectors to add.
        device : str, default="cpu"
            Where hashing runs.

        Returns
        -------
        range
            The ids of the added vectors.
        """
        X = as_rows(X, np.float32, "the vectors")
        start, end = _neurobits.FlyIndex.append(os.fspath(path), X, device)
        return range(start, end)

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        index = state.pop("_index")
        state["_index_bytes"] = None if index is None else bytes(index.to_bytes())
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        state = dict(state)
        data = state.pop("_index_bytes", None)
        self.__dict__.update(state)
        self._index = None if data is None else _neurobits._from_bytes("flyhash-index", data)

    def __repr__(self) -> str:
        return f"FlyHashIndex(d={self.d}, ntotal={self.ntotal}, code_bits={self.code_bits}, winners={self.winners}, device={self.device!r})"

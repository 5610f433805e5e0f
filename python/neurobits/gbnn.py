"""The Gripon–Berrou associative memory (GBNN)."""

from __future__ import annotations

from typing import Any, Dict, Tuple, Union

import json

import numpy as np

from . import _neurobits
from ._base import Estimator, as_rows, config_json


class GBNN(Estimator):
    """Gripon–Berrou neural network: an associative memory of messages of ``clusters`` symbols,
    each symbol one of ``neurons`` values; retrieval completes messages with erased symbols.

    Parameters
    ----------
    clusters : int, default=8
        Clusters C, the symbols per message.
    neurons : int, default=256
        Neurons per cluster L, the size of the alphabet.
    rule : {"joint", "sum-of-sum", "sum-of-max", "bail-out-early"}, default="joint"
        The retrieval rule (underscores may stand for the hyphens).
    gamma : int, default=2
        Sum-of-sum's reinforcement factor γ (the memory effect).
    max_iter : int, default=20
        Sum-of-sum's update limit t_max (at most 10 000).
    device : str, default="cpu"
        Where retrieval runs: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"`` (the GPU when
        one opens, else the CPU).

    Attributes
    ----------
    n_features_in_ : int
        C, the symbols per message.
    n_stored_ : int
        Messages stored (counted with repeats).

    Examples
    --------
    >>> import numpy as np
    >>> from neurobits import GBNN
    >>> m = GBNN(clusters=3, neurons=4).fit(np.array([[1, 2, 0], [3, 3, 1]]))
    >>> states, symbols = m.retrieve(np.array([[-1, 2, 0], [3, -1, 1]]))
    >>> symbols
    array([[1, 2, 0],
           [3, 3, 1]])
    """

    _rust = _neurobits.Gbnn
    _kind = "gbnn"

    def __init__(
        self,
        clusters: int = 8,
        neurons: int = 256,
        rule: str = "joint",
        gamma: int = 2,
        max_iter: int = 20,
        device: str = "cpu",
    ) -> None:
        self.clusters = clusters
        self.neurons = neurons
        self.rule = rule
        self.gamma = gamma
        self.max_iter = max_iter
        self.device = device

    def _rule(self) -> str:
        return str(self.rule).replace("_", "-")

    def _config(self) -> str:
        return config_json(
            {
                "clusters": self.clusters,
                "neurons": self.neurons,
                "rule": self._rule(),
                "gamma": self.gamma,
                "max_iter": self.max_iter,
            }
        )

    @classmethod
    def _params_of(cls, config: Dict[str, Any]) -> Dict[str, Any]:
        return {k: config[k] for k in ("clusters", "neurons", "rule", "gamma", "max_iter")}

    def _set_fitted(self) -> None:
        self.n_features_in_ = int(self._model_c())
        self.n_stored_ = int(self._model.stored)

    def _model_c(self) -> int:
        import json

        return int(json.loads(self._model.config_json)["clusters"])

    def fit(self, X: Any, y: Any = None) -> "GBNN":
        """Forget everything, then store the messages ``X``.

        Parameters
        ----------
        X : array-like of shape (n_messages, clusters)
            Integer symbols in ``0 .. neurons - 1``. A C-contiguous ``int64`` array is read in
            place; any other integer (or integral float) array is converted once.
        y : None
            Ignored.

        Returns
        -------
        self : GBNN
            The fitted memory.
        """
        X = as_rows(X, np.int64, "the messages", integers=True)
        model = self._rust(self._config())
        model.fit(X)
        self._model = model
        self._set_fitted()
        return self

    def partial_fit(self, X: Any, y: Any = None) -> "GBNN":
        """Store the messages ``X`` on top of those stored before (``fit`` if none were).

        Parameters
        ----------
        X : array-like of shape (n_messages, clusters)
            Integer symbols in ``0 .. neurons - 1``.
        y : None
            Ignored.

        Returns
        -------
        self : GBNN
            The memory.
        """
        if getattr(self, "_model", None) is None:
            return self.fit(X)
        X = as_rows(X, np.int64, "the messages", integers=True)
        self._model.partial_fit(X)
        self._set_fitted()
        return self

    def retrieve(
        self, probes: Any, return_stats: bool = False, mode: str = "erasure"
    ) -> Union[Tuple[np.ndarray, np.ndarray], Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Complete ``probes`` (−1 for an erased cluster) with the configured rule.

        ``rule``, ``gamma``, ``max_iter`` and ``device`` are read at each call (they are
        retrieval options); ``clusters`` and ``neurons`` are those of the stored network.

        Parameters
        ----------
        probes : array-like of shape (n_probes, clusters)
            Symbols in ``0 .. neurons - 1``, or −1 for an erased cluster.
        return_stats : bool, default=False
            Also return each probe's updates and whether it converged.
        mode : {"erasure", "noisy", "sparse"}, default="erasure"
            ``"noisy"``: the given symbols may be wrong (no cluster is frozen); ``"sparse"``:
            messages with silent clusters (−2 in messages and probes), global winner-take-all.
            Both take the rules ``"sum-of-sum"`` and ``"sum-of-max"``, on the CPU or a GPU.

        Returns
        -------
        states : ndarray of uint64, shape (n_probes, clusters * ceil(neurons / 64))
            Each cluster's active neurons as bits: bit ``j % 64`` of word
            ``c * ceil(L / 64) + j // 64`` is neuron ``j`` of cluster ``c``.
        symbols : ndarray of int64, shape (n_probes, clusters)
            The one active symbol of each cluster, −1 where none or several are.
        iterations : ndarray of uint32, shape (n_probes,)
            Updates run (only with ``return_stats``).
        converged : ndarray of bool, shape (n_probes,)
            Whether the state stopped changing (only with ``return_stats``).
        """
        model = self._check_fitted()
        P = as_rows(probes, np.int64, "the probes", integers=True)
        states, symbols, iters, conv = model.retrieve(
            P, self._device(), self._rule(), self.gamma, self.max_iter, str(mode)
        )
        if return_stats:
            return states, symbols, iters, conv
        return states, symbols

    def save(self, path: Any) -> None:
        """Save the memory and the current retrieval options (``rule``, ``gamma``, ``max_iter``)
        in the saved-model format (atomically); the command line reads it.

        Parameters
        ----------
        path : str or path-like
            The file to write.
        """
        model = self._check_fitted()
        saved = json.loads(model.config_json)
        options = (self._rule(), int(self.gamma), int(self.max_iter))
        if (saved["rule"], saved["gamma"], saved["max_iter"]) != options:
            model.set_options(*options)
        super().save(path)

    def predict(self, probes: Any) -> np.ndarray:
        """The completed messages: ``retrieve(probes)[1]``.

        Parameters
        ----------
        probes : array-like of shape (n_probes, clusters)
            Symbols, −1 for an erased cluster.

        Returns
        -------
        symbols : ndarray of int64, shape (n_probes, clusters)
            −1 where a cluster is not down to one active neuron.
        """
        return self.retrieve(probes)[1]

    @property
    def weights_(self) -> np.ndarray:
        """The adjacency matrix W, ``(C·L) × (C·⌈L/64⌉)`` words (row ``c·L + i``: neuron ``i``
        of cluster ``c``)."""
        return self._check_fitted().weights()

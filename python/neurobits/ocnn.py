"""The oscillatory chaotic neural network (OCNN): clustering by synchronized chaos."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Sequence

import numpy as np

from . import _neurobits
from ._base import HAVE_SKLEARN, ClusterMixin, Estimator, as_rows, config_json

_KEYS = ("seed", "iters", "transient", "sync", "eps", "threshold", "select", "scales", "restarts", "links", "min_cluster", "scale", "cutoff", "dtype", "variant")


class OCNN(ClusterMixin, Estimator):
    """OCNN clusterer: one chaotic neuron per point, coupled by the points' distances; points
    whose outputs synchronize share a cluster. Transductive: its weights are the points, so
    there is ``fit``/``fit_predict`` and ``labels_``, and no ``predict``.

    Parameters
    ----------
    seed : int, default=1
        Seed of the initial state (SplitMix64).
    iters : int, default=1000
        Observed iterations T (1 to 10⁶).
    transient : int, default=0
        Iterations run before observing (0 to 10⁶).
    sync : {"phase", "fragmentary"}, default="phase"
        Synchronization measure.
    eps : float, default=0.2
        ε of fragmentary synchronization.
    threshold : int or None, default=None
        Link threshold in percent (0 to 99); ``None``: automatic (see ``select``).
    select : {"consensus", "stable", "plateau"}, default="consensus"
        The automatic rule: ``"consensus"`` runs the dynamics at each of ``scales`` from
        ``restarts`` initial states each, selects
        each run's most stable clusters (excess of mass over the thresholds, as HDBSCAN selects
        them) and keeps the clustering that agrees best with the others (mean adjusted Rand
        index); ``"stable"`` is the most stable clusters at the scale a alone; ``"plateau"`` the
        first rule, the middle of the longest run of equal cluster counts.
    scales : sequence of float, default=(1.0, 1.5, 2.5)
        Coupling scale factors of ``select="consensus"``, ascending: multiples of a (above 3-D
        without ``scale``, of the coupling perplexity 20 that sets a); each is a whole run of the
        dynamics per restart.
    restarts : int, default=2
        Initial states per scale of ``select="consensus"`` (1 to 8).
    links : {"mutual", "all"}, default="mutual"
        Pairs the consensus selection may link: ``"mutual"``, only mutual k-nearest neighbours
        (k = ceil(log2 N), and each point with its nearest neighbour: small rings and moons stay
        apart); ``"all"``, every pair (the rule before; a model file saved before this parameter
        existed loads with it).
    min_cluster : int or None, default=None
        Smallest cluster of ``select="consensus"``/``"stable"`` (at least 2); ``None``: for
        ``"stable"`` a tenth of the points, at least 5; for ``"consensus"`` the one of N/10, N/20
        and N/40 (at least 5) whose runs agree best, a smaller one only when its runs agree
        clearly better (``report_["min_cluster"]`` says which).
    scale : float or None, default=None
        Scale constant a; ``None``: from the Delaunay triangulation of the points up to 3-D,
        above it the a at which each neuron's normalised coupling has a median perplexity of 20.
    cutoff : float or None, default=None
        Couple only pairs within ``cutoff``·a (sparse); ``None``: every pair, as in the paper.
    dtype : {"f32", "f64"}, default="f32"
        Working type of the dynamics.
    variant : {"lane-rows", "x-threads", "thread-per-neuron", "y-threads"}, default="lane-rows"
        GPU decomposition of the update (all give the same bits).
    device : str, default="cpu"
        Where the dynamics run: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``.

    Attributes
    ----------
    labels_ : ndarray of int64, shape (n_samples,)
        Cluster of each point, numbered 0, 1, … in the order of their first point.
    n_clusters_ : int
        Clusters found, singletons included.
    n_features_in_ : int
        Coordinates per point.
    report_ : dict
        The run's report: scale ``a``, ``threshold_percent``, ``k``, the ``curve`` of cluster
        counts against the threshold, SHA-256 digests of the hits and the final state, times,
        the smallest cluster kept (``min_cluster``) and how many points had no coupling at the
        scale and were left out as singletons (``uncoupled``).

    Notes
    -----
    ``fit`` is one library call: the GIL is released while it runs, and Ctrl-C stops it
    between two iterations on the CPU (the model keeps its earlier fit); a GPU run stops when
    its kernels return.

    Examples
    --------
    >>> import numpy as np
    >>> from neurobits import OCNN
    >>> X = np.array([[0, 0], [0.1, 0], [0, 0.1], [5, 5], [5.1, 5], [5, 5.1]])
    >>> OCNN(iters=200).fit_predict(X)
    array([0, 0, 0, 1, 1, 1])
    """

    _rust = _neurobits.Ocnn
    _kind = "ocnn"

    def __init__(
        self,
        seed: int = 1,
        iters: int = 1000,
        transient: int = 0,
        sync: str = "phase",
        eps: float = 0.2,
        threshold: Optional[int] = None,
        select: str = "consensus",
        scales: Sequence[float] = (1.0, 1.5, 2.5),
        restarts: int = 2,
        links: str = "mutual",
        min_cluster: Optional[int] = None,
        scale: Optional[float] = None,
        cutoff: Optional[float] = None,
        dtype: str = "f32",
        variant: str = "lane-rows",
        device: str = "cpu",
    ) -> None:
        self.seed = seed
        self.iters = iters
        self.transient = transient
        self.sync = sync
        self.eps = eps
        self.threshold = threshold
        self.select = select
        self.scales = scales
        self.restarts = restarts
        self.links = links
        self.min_cluster = min_cluster
        self.scale = scale
        self.cutoff = cutoff
        self.dtype = dtype
        self.variant = variant
        self.device = device

    @classmethod
    def _params_of(cls, config: Dict[str, Any]) -> Dict[str, Any]:
        # Keys a model file lacks (saved before they existed) keep their defaults; the scales come
        # back from JSON as a list and are a tuple, as the constructor's default.
        params = {k: config[k] for k in _KEYS if k in config}
        if isinstance(params.get("scales"), list):
            params["scales"] = tuple(params["scales"])
        return params

    def _set_fitted(self) -> None:
        self.labels_ = self._model.labels()
        self.report_ = json.loads(self._model.report_json)
        self.n_clusters_ = int(self.report_["k"])
        self.n_features_in_ = int(self.report_["dim"])

    def fit(self, X: Any, y: Any = None) -> "OCNN":
        """Cluster the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            At least 2 points of finite coordinates; a C-contiguous ``float64`` array is read
            without conversion (the library copies it once), any other is converted once.
        y : None
            Ignored.

        Returns
        -------
        self : OCNN
            The fitted clusterer.
        """
        X = as_rows(X, np.float64, "the points")
        model = self._rust(config_json({k: getattr(self, k) for k in _KEYS}))
        model.fit(X, self._device())
        self._model = model
        self._set_fitted()
        return self

    def fit_predict(self, X: Any, y: Any = None, **kwargs: Any) -> np.ndarray:
        """``fit(X)``, then ``labels_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The points.
        y : None
            Ignored.

        Returns
        -------
        ndarray of int64, shape (n_samples,)
            The labels.
        """
        return self.fit(X).labels_

    if HAVE_SKLEARN:

        def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
            tags = super().__sklearn_tags__()
            tags.input_tags.allow_nan = False
            return tags

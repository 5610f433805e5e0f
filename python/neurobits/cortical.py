"""The cortical-column network of Nere, Franey, Hashmi & Lipasti (2012)."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np

from . import _neurobits
from ._base import HAVE_SKLEARN, ClassifierMixin, Estimator, as_labels, as_rows, config_json

_KEYS = ("levels", "minicolumns", "epochs", "exposure", "seed", "beta", "rule", "rate", "schedule", "upsample", "lgn_threshold", "variant")


class Cortical(ClassifierMixin, Estimator):
    """A tree of hypercolumns of minicolumns that learns features of square images without
    supervision; ``predict`` gives the readout's label (under the default competitive rule the
    label of the training image whose population code — every minicolumn's matched mass — is
    nearest in L1; under ``rule="spec"`` that of the training image whose features agree most).

    Parameters
    ----------
    levels : int, default=5
        Levels L of the tree (2^L − 1 hypercolumns), 1 to 40.
    minicolumns : int, default=16
        Minicolumns per hypercolumn, 1 to 128.
    epochs : int, default=20
        Passes over the training images.
    exposure : int, default=1
        Consecutive learning steps per image.
    seed : int, default=1
        Seed of the initial weights, random firing and shuffles.
    beta : float, default=0.5
        LTD step β in [0, 1] of ``rule="spec"``.
    rule : {"competitive", "spec"}, default="competitive"
        Learning rule: competitive (lateral inhibition always picks a winner, learning rate
        2^-rate; generalises to unseen images) or the spec's (memorises; reproduces its digests).
    rate : int, default=2
        Learning rate 2^-rate of the competitive rule, 1 to 15.
    schedule : {"synchronous", "pipelined"}, default="synchronous"
        Level schedule.
    upsample : int, default=2
        Pixel replication per axis before the LGN (2 turns 8×8 digits into 16×16).
    variant : {"per-level", "queue", "graph"}, default="per-level"
        GPU variant of the synchronous schedule.
    device : str, default="cpu"
        Where training runs (``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"auto"``); features and
        the readout run on the CPU.
    lgn_threshold : int or None, default=None
        The LGN cells' threshold θ: an on-off cell fires when its centre–surround contrast
        exceeds θ, an off-on cell when its negative does (pixels 0…16; θ in 0 to 127); None: 12 under the
        competitive rule (chosen on a validation split), 16 under the spec's.

    Attributes
    ----------
    classes_ : ndarray of int64
        The training labels, sorted (not set on a model read by :meth:`load`).
    n_features_in_ : int
        Pixels per image, a square (not set on a model read by :meth:`load`).
    n_hypercolumns_ : int
        Hypercolumns, the features per image of ``transform``.

    Notes
    -----
    ``fit`` is one library call: the GIL is released while it runs, and Ctrl-C stops it at the
    next training image (the model keeps its earlier fit). Pixels are integers 0…16 (scikit-learn's digits) or 0…255.

    Examples
    --------
    >>> import numpy as np
    >>> from neurobits import Cortical
    >>> X = np.zeros((4, 16), np.float32)
    >>> X[:2, [0, 1, 4, 5, 8, 9, 12, 13]] = 16
    >>> X[2:, [2, 3, 6, 7, 10, 11, 14, 15]] = 16
    >>> Cortical(levels=2, minicolumns=8, epochs=5, upsample=1).fit(X, [0, 0, 1, 1]).predict(X)
    array([0, 0, 1, 1])
    """

    _rust = _neurobits.Cortical
    _kind = "cortical"

    def __init__(
        self,
        levels: int = 5,
        minicolumns: int = 16,
        epochs: int = 20,
        exposure: int = 1,
        seed: int = 1,
        beta: float = 0.5,
        rule: str = "competitive",
        rate: int = 2,
        schedule: str = "synchronous",
        upsample: int = 2,
        variant: str = "per-level",
        device: str = "cpu",
        lgn_threshold: Optional[int] = None,
    ) -> None:
        self.levels = levels
        self.minicolumns = minicolumns
        self.epochs = epochs
        self.exposure = exposure
        self.seed = seed
        self.beta = beta
        self.rule = rule
        self.rate = rate
        self.schedule = schedule
        self.upsample = upsample
        self.lgn_threshold = lgn_threshold
        self.variant = variant
        self.device = device

    @classmethod
    def _params_of(cls, config: Dict[str, Any]) -> Dict[str, Any]:
        return {k: config[k] for k in _KEYS}

    def _set_fitted(self) -> None:
        hc, _, _ = self._model.shape
        self.n_hypercolumns_ = int(hc)
        # From the model itself, so that a loaded or unpickled network has them too.
        self.classes_ = np.asarray(self._model.classes)
        self.n_features_in_ = int(self._model.n_features)

    def fit(self, X: Any, y: Any) -> "Cortical":
        """Train a new network on the images ``X`` with labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_images, side * side)
            One square image per row, integer pixels 0…16 or 0…255.
        y : array-like of shape (n_images,)
            Integer labels (the readout's reference).

        Returns
        -------
        self : Cortical
            The trained network.
        """
        X = as_rows(X, np.float32, "the images")
        y = as_labels(y, X.shape[0])
        if y.dtype.kind not in "iu":
            raise ValueError(f"the labels: expected integer labels, got dtype {y.dtype}")
        y = np.ascontiguousarray(y, dtype=np.int64)
        model = self._rust(config_json({k: getattr(self, k) for k in _KEYS}))
        model.fit(X, y, self._device())
        self._model = model
        self._train_labels = y
        self.n_features_in_ = int(X.shape[1])
        self._set_fitted()
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Features of each image: the winning minicolumn of each hypercolumn (−1 silent).

        Parameters
        ----------
        X : array-like of shape (n_images, side * side)
            Images of the training side.

        Returns
        -------
        ndarray of int32, shape (n_images, n_hypercolumns_)
        """
        model = self._check_fitted()
        return model.transform(as_rows(X, np.float32, "the images"))

    def predict(self, X: Any) -> np.ndarray:
        """The label of each image: that of the training image whose features agree most.

        Parameters
        ----------
        X : array-like of shape (n_images, side * side)
            Images of the training side.

        Returns
        -------
        ndarray of int64, shape (n_images,)
        """
        model = self._check_fitted()
        return model.predict(as_rows(X, np.float32, "the images"))

    def score_nmi(self, X: Any, y: Any) -> Tuple[float, float]:
        """Accuracy and normalised mutual information of ``predict(X)`` against ``y`` (the
        library's ``score``).

        Parameters
        ----------
        X : array-like of shape (n_images, side * side)
            Images.
        y : array-like of shape (n_images,)
            True integer labels.

        Returns
        -------
        (float, float)
        """
        model = self._check_fitted()
        X = as_rows(X, np.float32, "the images")
        y = np.ascontiguousarray(as_labels(y, X.shape[0]), dtype=np.int64)
        return model.score(X, y)

    if HAVE_SKLEARN:

        def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
            tags = super().__sklearn_tags__()
            tags.input_tags.allow_nan = False
            tags.classifier_tags.poor_score = True
            return tags

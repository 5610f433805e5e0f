"""What every estimator shares: scikit-learn's base classes when scikit-learn is importable (else
small stand-ins with the same behaviour), input validation, saving and pickling."""

from __future__ import annotations

import inspect
import json
import os
from typing import Any, Dict, Optional, Type, TypeVar

import numpy as np

from . import _neurobits

try:  # scikit-learn is optional: the package imports and works without it.
    from sklearn.base import BaseEstimator as _SkBase
    from sklearn.base import ClassifierMixin, ClusterMixin, TransformerMixin
    from sklearn.exceptions import DataConversionWarning
    from sklearn.exceptions import NotFittedError

    HAVE_SKLEARN = True
except ImportError:  # pragma: no cover - exercised by the no-sklearn test in a subprocess
    HAVE_SKLEARN = False

    class NotFittedError(ValueError, AttributeError):  # type: ignore[no-redef]
        """Raised by a method that needs a fitted estimator (scikit-learn's, when present)."""

    class DataConversionWarning(UserWarning):  # type: ignore[no-redef]
        """A column vector of labels was given where a 1-D array was expected."""

    class _SkBase:  # type: ignore[no-redef]
        """``get_params``/``set_params`` from the constructor's signature, as scikit-learn does."""

        @classmethod
        def _get_param_names(cls) -> list:
            sig = inspect.signature(cls.__init__)
            return sorted(p.name for p in sig.parameters.values() if p.name != "self")

        def get_params(self, deep: bool = True) -> Dict[str, Any]:
            return {k: getattr(self, k) for k in self._get_param_names()}

        def set_params(self, **params: Any):
            valid = self._get_param_names()
            for k, v in params.items():
                if k not in valid:
                    raise ValueError(f"Invalid parameter {k!r} for estimator {type(self).__name__}. Valid parameters are: {valid!r}.")
                setattr(self, k, v)
            return self

        def __repr__(self) -> str:
            defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
            args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if defaults.get(k) != v)
            return f"{type(self).__name__}({args})"

    class ClassifierMixin:  # type: ignore[no-redef]
        _estimator_type = "classifier"

        def score(self, X, y, sample_weight=None) -> float:
            y = np.asarray(y)
            right = (self.predict(X) == y).astype(np.float64)
            return float(np.average(right, weights=sample_weight))

    class TransformerMixin:  # type: ignore[no-redef]
        def fit_transform(self, X, y=None, **fit_params):
            return self.fit(X, y, **fit_params).transform(X)

    class ClusterMixin:  # type: ignore[no-redef]
        _estimator_type = "clusterer"

        def fit_predict(self, X, y=None, **kwargs):
            self.fit(X, y, **kwargs)
            return self.labels_


_neurobits._set_not_fitted_error(NotFittedError)

E = TypeVar("E", bound="Estimator")


def as_rows(X: Any, dtype: Any, what: str, *, integers: bool = False) -> np.ndarray:
    """``X`` as a C-contiguous 2-D array of ``dtype``: no copy when it already is one, else one
    conversion. Sparse, complex, non-numeric, 1-D or 3-D, and empty input are refused here (the
    library sees only numbers); values are checked by the library, with the CLI's messages."""
    if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        raise TypeError(f"{what}: sparse input is not supported; pass a dense array (X.toarray())")
    try:
        a = np.asarray(X)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{what}: not an array of numbers ({e})") from None
    if a.dtype.kind == "c":
        raise ValueError(f"{what}: Complex data not supported (dtype {a.dtype})")
    if a.dtype.kind == "O":
        try:
            a = a.astype(np.float64)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}: argument must be a string or a number array of numbers ({e})") from None
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{what}: dtype {a.dtype} is not numeric")
    if a.ndim != 2:
        raise ValueError(
            f"{what}: expected a 2D array (one row per sample), got {a.ndim}D of shape {a.shape}. "
            "Reshape your data either using X.reshape(-1, 1) if it has a single feature or X.reshape(1, -1) if it is a single sample."
        )
    if a.shape[0] == 0:
        raise ValueError(f"{what}: 0 sample(s) (shape={a.shape}) while a minimum of 1 is required.")
    if a.shape[1] == 0:
        raise ValueError(f"{what}: 0 feature(s) (shape={a.shape}) while a minimum of 1 is required.")
    if integers and a.dtype.kind == "f":
        bad = ~np.isfinite(a) | (a != np.round(a)) if a.size else np.zeros(a.shape, bool)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise ValueError(f"{what}: row {r + 1}, column {c + 1}: {a[r, c]} is not an integer symbol")
    return np.ascontiguousarray(a, dtype=dtype)


def as_labels(y: Any, n: int, what: str = "the labels") -> np.ndarray:
    """``y`` as a 1-D array of ``n`` labels (a column vector is accepted with a warning)."""
    import warnings

    if y is None:
        raise ValueError(f"{what}: requires y to be passed, but the target y is None")
    a = np.asarray(y)
    if a.ndim == 2 and a.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the shape of y to (n_samples, ), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        a = a.ravel()
    if a.ndim != 1:
        raise ValueError(f"{what}: expected a 1-D array of labels, got shape {a.shape}")
    if a.shape[0] != n:
        raise ValueError(f"{what}: {a.shape[0]} labels for {n} vectors")
    return a


def as_int(value: Any, name: str) -> int:
    """``value`` as a Python ``int`` (a numpy integer too), else ``TypeError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} = {value!r}: expected an integer")
    return int(value)


def neighbours(k: Any) -> int:
    """The ``k`` of a ``search``: an integer, at least 1."""
    k = as_int(k, "k")
    if k < 1:
        raise ValueError(f"k = {k}: must be at least 1")
    return k


def filled(index: Any) -> Any:
    """An index's Rust object, or ``NotFittedError`` before its first ``add``."""
    if index is None:
        raise NotFittedError("this FlyHash index is empty: call add first")
    return index


def config_json(d: Dict[str, Any]) -> str:
    """A configuration as the JSON the Rust side reads (numpy scalars made plain)."""

    def plain(v: Any) -> Any:
        if isinstance(v, np.generic):
            return v.item()
        return v

    return json.dumps({k: plain(v) for k, v in d.items()})


class Estimator(_SkBase):
    """The shared part of every neurobits estimator: the Rust model in ``_model`` (``None``
    until fitted), the device, ``save``/``load`` and pickling through the saved-model format."""

    _rust: Any = None  # the _neurobits class
    _kind: str = ""

    def __sklearn_is_fitted__(self) -> bool:
        return getattr(self, "_model", None) is not None

    def _check_fitted(self) -> Any:
        m = getattr(self, "_model", None)
        if m is None:
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with appropriate arguments before using this estimator."
            )
        return m

    def _device(self) -> str:
        d = getattr(self, "device", "cpu")
        if not isinstance(d, str):
            raise TypeError(f"device = {d!r}: expected a string (cpu, cuda, cuda:N or auto)")
        return d

    def save(self, path: "os.PathLike[str] | str") -> None:
        """Save the fitted model to ``path`` in the saved-model format (atomically).

        The file is the one the ``neurobits`` command line writes and reads (``--model``).

        Parameters
        ----------
        path : str or path-like
            The file to write.
        """
        self._check_fitted().save(os.fspath(path))

    @classmethod
    def load(cls: Type[E], path: "os.PathLike[str] | str", device: str = "cpu") -> E:
        """Load a model saved by :meth:`save` or by the ``neurobits`` command line.

        Parameters
        ----------
        path : str or path-like
            The file to read.
        device : str, default="cpu"
            Where the loaded model computes (not part of the file).

        Returns
        -------
        estimator
            A fitted estimator whose parameters are the saved configuration.
        """
        return cls._from_model(cls._rust.load(os.fspath(path)), device)

    @classmethod
    def _from_model(cls: Type[E], model: Any, device: str) -> E:
        est = cls(**cls._params_of(json.loads(model.config_json)), device=device)  # type: ignore[call-arg]
        est._model = model
        est._set_fitted()
        return est

    @classmethod
    def _params_of(cls, config: Dict[str, Any]) -> Dict[str, Any]:
        return config

    def _set_fitted(self) -> None:
        """Sets the trailing-underscore attributes from ``self._model``."""

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(super().__getstate__() if hasattr(super(), "__getstate__") else self.__dict__)
        model = state.pop("_model", None)
        # The fitted state travels as the saved-model file (checked when read back).
        state["_model_bytes"] = None if model is None else bytes(model.to_bytes())
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        state = dict(state)
        data: Optional[bytes] = state.pop("_model_bytes", None)
        if hasattr(super(), "__setstate__"):
            super().__setstate__(state)  # type: ignore[misc]
        else:  # pragma: no cover
            self.__dict__.update(state)
        if data is not None:
            self._model = _neurobits._from_bytes(self._kind, data)

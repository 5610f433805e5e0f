"""neurobits: bit-exact bio-inspired neural models on CPUs and CUDA GPUs, numpy in and out.

Every model is a scikit-learn-style estimator (constructor arguments are the configuration,
``fit`` returns ``self``, fitted state in trailing-underscore attributes) over the Rust library
``neurobits``, with ``device="cpu" | "cuda" | "cuda:N" | "auto"``, ``save``/``load`` through the
saved-model format the command line reads and writes, and pickling through the same format.

- :class:`GBNN`: the Gripon–Berrou associative memory (``fit``, ``partial_fit``, ``retrieve``).
- :class:`FlyHash`: sparse binary codes (a transformer), :class:`FlyHashIndex`: exact Hamming
  search over them (``add``, ``search``), :class:`FlyHashApproxIndex`: approximate search
  (multi-probe buckets, one knob ``probes``).
- :class:`FlyNN`: the FlyNN classifier (``fit``, ``partial_fit``, ``predict``, ``predict_proba``).
- :class:`OCNN`: clustering by synchronized chaos (``fit``, ``fit_predict``, ``labels_``).
- :class:`Cortical`: the cortical-column network (``fit``, ``predict``, ``transform``).
"""

from . import _neurobits
from ._base import NotFittedError
from .cortical import Cortical
from .flyhash import FlyHash, FlyHashIndex, unpack
from .flyhash_ann import FlyHashApproxIndex
from .flynn import FlyNN
from .gbnn import GBNN
from .ocnn import OCNN


def cuda_available(ordinal: int = 0) -> bool:
    """Whether CUDA GPU ``ordinal`` opens here (the driver is loaded at run time).

    Parameters
    ----------
    ordinal : int, default=0
        The GPU's index.

    Returns
    -------
    bool
    """
    return bool(_neurobits.cuda_available(ordinal))


__version__ = _neurobits.version().split(" ")[0]
library_version = _neurobits.version()

__all__ = [
    "GBNN",
    "FlyHash",
    "FlyHashIndex",
    "FlyHashApproxIndex",
    "FlyNN",
    "OCNN",
    "Cortical",
    "NotFittedError",
    "cuda_available",
    "unpack",
    "__version__",
    "library_version",
]

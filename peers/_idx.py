"""The IDX reader the peer scripts share (Fashion-MNIST's gzip'd IDX files as numpy arrays)."""

import gzip

import numpy as np


def idx(path):
    """The array in the gzip'd IDX file `path` (unsigned bytes, its header's shape)."""
    with gzip.open(path) as f:
        b = f.read()
    nd = b[3]
    dims = [int.from_bytes(b[4 + 4 * i : 8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(b, np.uint8, offset=4 + 4 * nd).reshape(dims)

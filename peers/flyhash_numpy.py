#!/usr/bin/env python3
"""The CPU peer a user would write instead of `neurobits flyhash hash`: FlyHash in numpy/scipy —
the projection as a scipy.sparse CSR matrix (the same rows as neurobits', read from its CSV), one
sparse-dense product per batch, `np.argpartition` for the k winners, bits packed as neurobits
packs them. Single-threaded by default (set OMP/OPENBLAS threads before numpy loads). Prints the
seconds of the hashing alone (inputs and projection already in memory) and, given neurobits'
code file, how many codes are identical (activations of integer pixels are exact in f32, so
codes differ only where the k-th and (k+1)-th activations tie and argpartition breaks the tie
differently from neurobits' lower-index rule).

    pip install numpy scipy
    neurobits flyhash projection --d 784 --m 25088 --s 39 --out proj.csv
    python3 peers/flyhash_numpy.py X.npy proj.csv K [CODES.bin]
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import struct, sys, time

import numpy as np
import scipy.sparse as sp


def load_projection(path, d):
    rows = np.loadtxt(path, delimiter=",", dtype=np.int64, ndmin=2)
    m, s = rows.shape
    return sp.csr_matrix((np.ones(m * s, np.float32), rows.ravel(), np.arange(0, m * s + 1, s)), shape=(m, d))


def flyhash(x, p, k, batch=512):
    b, m = x.shape[0], p.shape[0]
    words = (m + 63) // 64
    codes = np.zeros((b, words * 64), dtype=bool)
    pt = p.T.tocsr()
    for i in range(0, b, batch):
        act = np.asarray(x[i : i + batch] @ pt)  # batch x m activations
        win = np.argpartition(-act, k - 1, axis=1)[:, :k]
        np.put_along_axis(codes[i : i + batch], win, True, axis=1)
    return np.packbits(codes, axis=1, bitorder="little").view("<u8")


def main():
    x = np.load(sys.argv[1]).astype(np.float32)
    p = load_projection(sys.argv[2], x.shape[1])
    k = int(sys.argv[3])
    t = time.perf_counter()
    codes = flyhash(x, p, k)
    secs = time.perf_counter() - t
    print(f"numpy/scipy FlyHash, 1 thread: {secs:.3f} s for {x.shape[0]} inputs (d={x.shape[1]}, m={p.shape[0]}, s={p.getrow(0).nnz}, k={k})")
    if len(sys.argv) > 4:
        b = open(sys.argv[4], "rb").read()
        n = struct.unpack("<Q", b[16:24])[0]
        ours = np.frombuffer(b[24:], dtype="<u8").reshape(n, -1)
        eq = (ours == codes).all(axis=1)
        # Where codes differ, the winners' activation values must still be the same multiset:
        # only the choice among tied values may differ.
        diff = np.flatnonzero(~eq)
        act = np.asarray(x[diff] @ p.T.tocsr())
        bits = lambda c: np.unpackbits(c.view(np.uint8), bitorder="little")[: p.shape[0]].astype(bool)
        ties_only = all(np.array_equal(np.sort(act[j][bits(ours[i])]), np.sort(act[j][bits(codes[i])])) for j, i in enumerate(diff))
        print(f"codes identical to neurobits': {int(eq.sum())} of {n}; the other codes pick the same winning values (differ only among ties): {ties_only}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The peer a user would pick instead of `neurobits flyhash search`: faiss IndexBinaryFlat (exact
Hamming k-NN), single-threaded, on the same neurobits code files; prints seconds and checks that
the neighbours' distances equal ours (faiss breaks ties differently, so indices are compared only
where distances are unique).

    pip install faiss-cpu numpy
    python3 peers/faiss_search.py DB.bin QUERIES.bin R [OURS.csv]
"""
import struct, sys, time

import faiss
import numpy as np


def load(path):
    b = open(path, "rb").read()
    assert b[:8] == b"NBFLYHSH", path
    m, n = struct.unpack("<I", b[12:16])[0], struct.unpack("<Q", b[16:24])[0]
    words = (m + 63) // 64
    codes = np.frombuffer(b[24:], dtype="<u8").reshape(n, words)
    return m, codes.view(np.uint8).reshape(n, words * 8)


def main():
    db_path, q_path, r = sys.argv[1], sys.argv[2], int(sys.argv[3])
    faiss.omp_set_num_threads(1)
    m, db = load(db_path)
    _, q = load(q_path)
    index = faiss.IndexBinaryFlat(db.shape[1] * 8)
    index.add(db)
    t = time.perf_counter()
    dist, idx = index.search(q, r)
    secs = time.perf_counter() - t
    print(f"faiss IndexBinaryFlat, 1 thread: {secs:.3f} s for {q.shape[0]} queries x {db.shape[0]} codes of {m} bits, top {r}")
    if len(sys.argv) > 4:
        ours = {}
        for line in open(sys.argv[4]).read().splitlines()[1:]:
            qi, rank, i, d = map(int, line.split(","))
            ours.setdefault(qi, []).append(d)
        same = all(sorted(ours[qi]) == sorted(dist[qi].tolist()) for qi in range(q.shape[0]))
        print("distances of the top r equal to neurobits':", same)


if __name__ == "__main__":
    main()

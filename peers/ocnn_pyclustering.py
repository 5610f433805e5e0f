#!/usr/bin/env python3
"""The peer a user would pick instead of `neurobits ocnn`: pyclustering's chaotic neural network
(pyclustering.nnet.cnn, A. Novikov, after Benderskaya & Zhukova), run the way its own examples run
it, on the FCPS sets with known classes; prints k, ARI and seconds per set (CSV on stdout).

    pip install pyclustering==0.10.1.2   # pulls numpy, scipy, matplotlib, Pillow
    python3 peers/ocnn_pyclustering.py [--data data/fcps] [--steps 100] [--neighbours 10]

Its model differs from the paper's (spec §9): a = mean distance to the k nearest neighbours,
weights exp(−d²/(2a)) with a not squared, initial state from the clock, ensembles by identical
sign patterns over the last 10 steps. Classes from the class files `neurobits ocnn experiment`
reads (lib/data/fcps/<set>.cls, FCPS's labels0).
"""
import argparse, sys, time

from pyclustering.nnet.cnn import cnn_network, type_conn


def classes(path):
    """FCPS class file: `%` header lines, then `key class` per point (keys 1, 2, ... in order)."""
    rows = [l.split() for l in open(path) if l.strip() and not l.startswith("%")]
    assert all(len(r) == 2 and int(r[0]) == i + 1 for i, r in enumerate(rows)), f"{path}: not key/class rows"
    return [int(c) for _, c in rows]


SETS = [("Lsun", 3), ("Target", 0), ("TwoDiamonds", 0), ("Hepta", 0), ("Tetra", 0), ("Atom", 0), ("Chainlink", 0), ("WingNut", 0)]


def ari(a, b):
    from collections import Counter
    c2 = lambda n: n * (n - 1) / 2
    cells, ra, rb = Counter(zip(a, b)), Counter(a), Counter(b)
    index = sum(c2(v) for v in cells.values())
    sa, sb = sum(c2(v) for v in ra.values()), sum(c2(v) for v in rb.values())
    expected = sa * sb / c2(len(a))
    mx = (sa + sb) / 2
    return 1.0 if mx == expected else (index - expected) / (mx - expected)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/fcps")
    ap.add_argument("--labels", default="lib/data/fcps", help="the class files, <set>.cls")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--neighbours", type=int, default=10)
    ap.add_argument("--points", help="one extra file of points to time (no classes)")
    args = ap.parse_args()
    print("set,n,k,ari,seconds")
    for name, skip in SETS:
        truth = classes(f"{args.labels}/{name}.cls")
        pts = [list(map(float, l.split())) for l in open(f"{args.data}/{name}.data") if l.strip()][skip:]
        t = time.time()
        net = cnn_network(len(pts), conn_type=type_conn.ALL_TO_ALL, amount_neighbors=args.neighbours)
        dyn = net.simulate(args.steps, pts)
        ens = dyn.allocate_sync_ensembles(10)
        secs = time.time() - t
        labels = [0] * len(pts)
        for c, members in enumerate(ens):
            for i in members:
                labels[i] = c
        print(f"{name},{len(pts)},{len(ens)},{ari(truth, labels):.4f},{secs:.3f}", flush=True)
    if args.points:
        pts = [list(map(float, l.split())) for l in open(args.points) if l.strip()]
        t = time.time()
        net = cnn_network(len(pts), conn_type=type_conn.ALL_TO_ALL, amount_neighbors=args.neighbours)
        net.simulate(args.steps, pts).allocate_sync_ensembles(10)
        print(f"{args.points},{len(pts)},,,{time.time() - t:.3f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

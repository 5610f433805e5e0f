#!/usr/bin/env python3
"""The peer a user would pick instead of `neurobits ocnn`: pyclustering's chaotic neural network
(pyclustering.nnet.cnn, A. Novikov, after Benderskaya & Zhukova), run the way its own examples run
it, on the FCPS sets with known classes; prints k, ARI and seconds per set (CSV on stdout).

    pip install pyclustering==0.10.1.2   # pulls numpy, scipy, matplotlib, Pillow
    python3 peers/ocnn_pyclustering.py [--data data/fcps] [--steps 100] [--neighbours 10]

Its model differs from the paper's (spec §9): a = mean distance to the k nearest neighbours,
weights exp(−d²/(2a)) with a not squared, initial state from the clock, ensembles by identical
sign patterns over the last 10 steps. Classes as `neurobits ocnn experiment` defines them.
"""
import argparse, math, sys, time

from pyclustering.nnet.cnn import cnn_network, type_conn


def blocks(*sizes):
    return [c for c, n in enumerate(sizes) for _ in range(n)]


def target(points):
    out = []
    for x, y in points:
        r = math.hypot(x, y)
        out.append(0 if r < 1 else 1 if r < 3 else 2 + 2 * (x > 0) + (y > 0))
    return out


SETS = [
    ("Lsun", 3, lambda p: blocks(200, 100, 100)),
    ("Target", 0, target),
    ("TwoDiamonds", 0, lambda p: blocks(400, 400)),
    ("Hepta", 0, lambda p: blocks(32, 30, 30, 30, 30, 30, 30)),
    ("Tetra", 0, lambda p: blocks(100, 100, 100, 100)),
    ("Atom", 0, lambda p: blocks(400, 400)),
    ("Chainlink", 0, lambda p: blocks(500, 500)),
    ("WingNut", 0, lambda p: [int(x >= 0) for x, _ in p]),
]


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
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--neighbours", type=int, default=10)
    ap.add_argument("--points", help="one extra file of points to time (no classes)")
    args = ap.parse_args()
    print("set,n,k,ari,seconds")
    for name, skip, truth in SETS:
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
        print(f"{name},{len(pts)},{len(ens)},{ari(truth(pts), labels):.4f},{secs:.3f}", flush=True)
    if args.points:
        pts = [list(map(float, l.split())) for l in open(args.points) if l.strip()]
        t = time.time()
        net = cnn_network(len(pts), conn_type=type_conn.ALL_TO_ALL, amount_neighbors=args.neighbours)
        net.simulate(args.steps, pts).allocate_sync_ensembles(10)
        print(f"{args.points},{len(pts)},,,{time.time() - t:.3f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

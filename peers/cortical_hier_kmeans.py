#!/usr/bin/env python3
"""What the cortical network's tree can reach at best: every hypercolumn replaced by k-means
(k = M clusters) on exactly its inputs, bottom-up — the LGN bits of its receptive field at the
bottom (spec D-10: 3x3 centre-surround, theta = 16, bisection), the one-hot winners of its two
children above — fitted on the training images, applied to the validation list. Prints the top
level's cluster accuracy (majority labels), the vote readout (naive Bayes over every
hypercolumn's cluster) and 1-NN on the agreement of the cluster codes (the spec's readout), beside
k-means on the pixels with M clusters.

    python3 peers/cortical_hier_kmeans.py [--levels 3] [--minicolumns 16] [--upsample 1]

Split: the digits hold-out's validation list (per class the 25 images before the last 50), trained
on the rest of the training images (manual, "Quality on held-out digits").
"""
import argparse, gzip

import numpy as np
from sklearn.cluster import KMeans
from sklearn.naive_bayes import CategoricalNB


def holdout(y, val=25, test=50):
    tr, va = [], []
    for c in sorted(set(y.tolist())):
        idx = np.flatnonzero(y == c)[:-test]
        tr += list(idx[:-val])
        va += list(idx[-val:])
    return np.array(tr), np.array(va)


def lgn(img, theta=16):
    p = np.pad(img, 1)
    h, w = img.shape
    d = 9 * img - sum(p[1 + a:1 + a + h, 1 + b:1 + b + w] for a in (-1, 0, 1) for b in (-1, 0, 1))
    return d > theta, -d > theta


def fields(levels, rows, cols):
    out, depth = [], levels - 1
    for j in range(2 ** depth):
        r0, c0, h, w = 0, 0, rows, cols
        for d in range(depth):
            second = (j >> (depth - 1 - d)) & 1
            if w >= h:
                half = w // 2
                c0, w = (c0 + half, w - half) if second else (c0, half)
            else:
                half = h // 2
                r0, h = (r0 + half, h - half) if second else (r0, half)
        out.append((r0, c0, h, w))
    return out


def bottom(imgs, levels, m, up):
    side, need = 8 * up, 2 ** (levels - 1) * m
    s = int(round(need ** 0.5))
    rows, cols = (s, s) if s * s == need else (int(round((need / 2) ** 0.5)), 2 * int(round((need / 2) ** 0.5)))
    x = np.zeros((len(imgs), 2 ** (levels - 1), 2 * m))
    for k, im in enumerate(imgs):
        canvas = np.zeros((rows, cols), int)
        t, l = (rows - side) // 2, (cols - side) // 2
        canvas[t:t + side, l:l + side] = np.kron(im, np.ones((up, up), int))
        on, off = lgn(canvas)
        for j, (r0, c0, h, w) in enumerate(fields(levels, rows, cols)):
            x[k, j, 0::2] = on[r0:r0 + h, c0:c0 + w].ravel()
            x[k, j, 1::2] = off[r0:r0 + h, c0:c0 + w].ravel()
    return x


def majority_accuracy(ctr, ytr, cte, yte):
    label = {c: np.bincount(ytr[ctr == c]).argmax() for c in set(ctr.tolist())}
    return float(np.mean([label.get(c, -1) == t for c, t in zip(cte, yte)]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="data/digits/digits.csv.gz")
    p.add_argument("--levels", type=int, default=3)
    p.add_argument("--minicolumns", type=int, default=16)
    p.add_argument("--upsample", type=int, default=1)
    a = p.parse_args()
    raw = np.loadtxt(gzip.open(a.data), delimiter=",")
    imgs, y = raw[:, :64].astype(int).reshape(-1, 8, 8), raw[:, 64].astype(int)
    tr, va = holdout(y)
    m = a.minicolumns
    x = bottom(imgs, a.levels, m, a.upsample)
    fit = lambda A, B: (lambda km: (km.labels_, km.predict(B)))(KMeans(m, n_init=4, random_state=0).fit(A))
    level = [fit(x[tr][:, j], x[va][:, j]) for j in range(2 ** (a.levels - 1))]
    every = list(level)
    onehot = lambda u, v: np.hstack([np.eye(m)[u], np.eye(m)[v]])
    while len(level) > 1:
        level = [fit(onehot(l[0], r[0]), onehot(l[1], r[1])) for l, r in zip(level[0::2], level[1::2])]
        every += level
    ftr, fva = np.array([c[0] for c in every]).T, np.array([c[1] for c in every]).T
    top = majority_accuracy(ftr[:, -1], y[tr], fva[:, -1], y[va])
    vote = CategoricalNB(min_categories=m).fit(ftr, y[tr]).score(fva, y[va])
    agree = (fva[:, None, :] == ftr[None]).sum(2)
    nn = float(np.mean(y[tr][agree.argmax(1)] == y[va]))
    flat = imgs.reshape(len(imgs), -1)
    km = KMeans(m, n_init=10, random_state=0).fit(flat[tr])
    pix = majority_accuracy(km.labels_, y[tr], km.predict(flat[va]), y[va])
    print(f"L={a.levels} M={m} upsample {a.upsample}: hierarchical k-means top level {top:.3f}, vote readout {vote:.3f}, "
          f"1-NN on code agreement {nn:.3f}; k-means on pixels ({m} clusters) {pix:.3f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""How the default consensus chooses its smallest cluster, and how its scales grow above 3-D
(issue 33, sixth round), on validation sets only.

    python3 peers/ocnn_min_cluster_choice.py runs SETS > runs.jsonl      # SETS: fcps,syn,small,hd,hd2,many
    HD=a python3 peers/ocnn_min_cluster_choice.py runs hd,many > hd-a.jsonl   # above 3-D at a·f (the rule before)
    SC=1,2,4 python3 peers/ocnn_min_cluster_choice.py runs hd,hd2,many > hd-124.jsonl   # perplexity 20, 40, 80
    python3 peers/ocnn_min_cluster_choice.py rules runs.jsonl [...]      # the rules' mean ARI per family

`runs`: for each set, every run of the default consensus (the scales a, 1.5a, 2.5a — above 3-D
the scales whose median coupling perplexity is 20·f, f = $SC — × the seed and its restart seed)
selected at each smallest cluster N/10, N/20, N/40 (at least 5), through the Python package
(one `OCNN(scale=…, scales=[1], restarts=1, min_cluster=m)` per run and size: the same hits and
selection as inside the consensus), as one JSON line. `rules`: per set, the consensus's pick at
each size and the rules that choose among the sizes — R1: the size whose runs' mean pairwise ARI
is highest; R1+δ: a smaller size only when its runs agree by more than δ better (the default:
δ = 0.1) — then the mean ARI per family beside the default of the binary the runs came from and
HDBSCAN. Validation sets: FCPS at seeds 1-3; seeds 0-2 of clustering_quality.py's synthetic
families, of the 100- and 300-point sets of ocnn_sizes.py's generators, of ocnn_highdim.py's
high-dimensional sets, and of 12 blobs of 50 points in 2-D, 3-D and 8-D (`many*`).

The consensus's rules (most_agreeing, the mean agreement, the choice among the sizes) are written
again here in Python to score rules the library does not have; the chosen rule's own runs in the
binary were checked against these figures (docs/manual/src/ocnn-many-clusters.md). A run that
found no cluster is scored as all singletons in most_agreeing, as the library does; in the mean
agreement the library counts a pair with a failed run as 0 (this script: as the ARI against all
singletons, 0, or 1 between two failed runs) — no validation set's choice differs (checked).
perplexity_scale is ocnn_highdim.py's, with the floor the library dropped in the same round; the
floor binds on none of these sets."""
import os, sys, json, warnings, itertools
import numpy as np
warnings.filterwarnings("ignore")
sys.path.insert(0, 'peers')
from clustering_quality import synthetic, FCPS, FAMILIES, fcps_truth
from ocnn_sizes import make as sz_make
from ocnn_highdim import make as hd_make, perplexity_scale
from sklearn import datasets, cluster
from sklearn.preprocessing import StandardScaler
from sklearn.metrics import adjusted_rand_score as ari
from concurrent.futures import ThreadPoolExecutor
from neurobits import OCNN
PT = float(os.environ.get('PT', '20'))
SC = [float(x) for x in os.environ.get('SC', '1,1.5,2.5').split(',')]
RS = {s: sorted({c['seed'] for c in OCNN(seed=s, iters=20).fit(np.random.default_rng(0).normal(size=(60,2))).report_['agreement']}, key=lambda t: (t != s, t)) for s in (1,2,3)}
def sets(which):
    if "fcps" in which:
        for name, skip in FCPS:
            X = np.loadtxt(f'data/fcps/{name}.data')[skip:]
            y = fcps_truth('lib/data/fcps', name, len(X))
            for s in (1, 2, 3): yield 'FCPS', f'{name}-{s}', s, X, y
    if "syn" in which:
        for f in FAMILIES[:9]:
            for s in (0, 1, 2):
                X, y = synthetic(f, s); yield f, f'{f}-{s}', 1, StandardScaler().fit_transform(X), y
    if "hd" in which:
        for f in ['varied30d', 'classif30', 'digits']:
            for s in (0, 1, 2):
                X, y = hd_make(f, s); yield f, f'{f}-{s}', 1, X, y
    if "hd2" in which:
        for f in ['blobs5d', 'blobs10d']:
            for s in (0, 1, 2):
                X, y = synthetic(f, s); yield f, f'{f}-{s}', 1, StandardScaler().fit_transform(X), y
    if "many" in which:
        for d in (2, 3, 8):
            for s in (0, 1, 2):
                X,y = datasets.make_blobs(600, centers=12, n_features=d, cluster_std=0.6 if d<4 else 1.5, center_box=(-15,15) if d<4 else (-10,10), random_state=s+700)
                yield f'many{d}d', f'many{d}d-{s}', 1, StandardScaler().fit_transform(X), y
    if "small" in which:
        for f in ['circles', 'moons', 'varied', 'aniso', 'blobs']:
            for n in (100, 300):
                for s in (0, 1, 2):
                    X, y = sz_make(f, n, s); yield f'{f}{n}', f'{f}{n}-{s}', 1, StandardScaler().fit_transform(X), y
def job(t):
    fam, name, seed, X, y = t
    n, d = X.shape
    try:
        base = OCNN(seed=seed).fit(X); dflt = ari(y, base.labels_)
        seeds = sorted({c['seed'] for c in base.report_['agreement']}, key=lambda s: (s != seed, s))
    except ValueError:
        dflt = 0.0; seeds = RS[seed]  # no cluster of N/10: every point its own (ARI 0)
    a = OCNN(select='stable', min_cluster=2, seed=seed, iters=10).fit(X).report_['a']
    # Above 3-D: the scales of median perplexity 20·f (the default since the sixth round), or
    # with HD=a the multiples of a (the rule before).
    byp = d > 3 and os.environ.get('HD') != 'a'
    ap = [perplexity_scale(X, PT * f) for f in SC] if byp else [a * f for f in SC]
    ms = sorted({max(5, n // q) for q in (10, 20, 40)}, reverse=True)
    labs = {}
    for m in ms:
        for fi, af in enumerate(ap):
            for s in seeds:
                try:
                    l = OCNN(seed=s, scale=af, scales=[1.0], restarts=1, min_cluster=m).fit_predict(X)
                except ValueError:
                    l = np.arange(n)
                labs[(m, fi, s)] = l.tolist()
    hd = ari(y, cluster.HDBSCAN().fit_predict(X))
    print(json.dumps(dict(family=fam, set=name, n=n, d=d, y=y.tolist(), ms=ms, seeds=seeds, hdbscan=hd,
          default=dflt, labs={f"{k[0]},{k[1]},{k[2]}": v for k, v in labs.items()})), flush=True)


from sklearn.metrics import adjusted_rand_score as ari
def eligible(l):
    c = np.bincount(l); return (c >= 2).sum() >= 2
def most_agreeing(parts, scale, elig):
    k = len(parts); A = np.ones((k, k))
    for i in range(k):
        for j in range(i+1, k): A[i,j] = A[j,i] = ari(parts[i], parts[j])
    best, bs = None, -9
    for i in range(k):
        if not elig[i]: continue
        mean = (A[i].sum() - 1) / (k - 1)
        own = [A[i,j] for j in range(k) if j != i and scale[j] == scale[i]]
        s = mean + (np.mean(own) if own else 0)
        if s > bs + 1e-9: best, bs = i, s
    return best, A
def evaluate(r):
    y = np.array(r['y']); ms = r['ms']; seeds = r['seeds']
    L = {tuple(int(x) for x in k.split(',')): np.array(v) for k, v in r['labs'].items()}
    out = {}
    per_m = {}
    for m in ms:
        keys = [(m, fi, s) for fi in range(3) for s in seeds]
        parts = [L[k] for k in keys]; el = [eligible(p) for p in parts]
        b, A = most_agreeing(parts, [k[1] for k in keys], el)
        k = len(parts); mean_all = (A.sum() - k) / (k * (k - 1))
        per_m[m] = (b, keys, parts, mean_all, el)
        out[f"m=N/{r['n']//m if m>5 else 'min'}"] = ari(y, parts[b]) if b is not None else 0
    m0 = ms[0]; out['R0'] = out[f"m=N/{r['n']//m0}"] if per_m[m0][0] is not None else 0
    # R1: m whose runs agree most (ties -> larger m)
    best_m = None
    for m in ms:
        b, keys, parts, mean_all, el = per_m[m]
        if b is None: continue
        if best_m is None or mean_all > per_m[best_m][3] + 1e-9: best_m = m
    out['R1'] = ari(y, per_m[best_m][2][per_m[best_m][0]]) if best_m else 0
    for dl in (0.05, 0.1, 0.15):
        bm = None
        for m in ms:
            b = per_m[m][0]
            if b is None: continue
            if bm is None or per_m[m][3] > per_m[bm][3] + dl: bm = m
        out[f'R1+{dl}'] = ari(y, per_m[bm][2][per_m[bm][0]]) if bm else 0
    out['R1m'] = best_m
    # R2: pooled
    keys = [(m, fi, s) for m in ms for fi in range(3) for s in seeds]
    parts = [L[k] for k in keys]; el = [eligible(p) for p in parts]
    b, A = most_agreeing(parts, [(k[0], k[1]) for k in keys], el)
    out['R2'] = ari(y, parts[b]) if b is not None else 0
    out['default'] = 0.0 if r['default'] == -1.0 else r['default']  # -1: an error (older runs)
    out['HDBSCAN'] = r['hdbscan']
    return out


def rules_main(files):
    rows = []
    for f in files:
        for line in open(f):
            r = json.loads(line); o = evaluate(r); o['family'] = r['family']; rows.append(o)
            print(r['set'], {k: (round(v, 3) if isinstance(v, float) else v) for k, v in o.items() if k != 'family'})
    cols = ['default', 'R1', 'R1+0.05', 'R1+0.1', 'R1+0.15', 'HDBSCAN']
    print('family'.ljust(12), *[c.rjust(8) for c in cols])
    for fam in dict.fromkeys(r['family'] for r in rows):
        rs = [r for r in rows if r['family'] == fam]
        print(fam.ljust(12), *[f"{np.mean([r[c] for r in rs]):8.3f}" for c in cols])


if __name__ == "__main__":
    if sys.argv[1] == "runs":
        with ThreadPoolExecutor(2) as ex:
            list(ex.map(job, sets(sys.argv[2].split(","))))
    else:
        rules_main(sys.argv[2:])

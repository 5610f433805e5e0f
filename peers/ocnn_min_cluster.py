#!/usr/bin/env python3
"""Why the smallest cluster stays N/10 (issue 33, fifth round), on validation sets only.

    python3 peers/ocnn_min_cluster.py BINARY 10,20,40 > results/ocnn/min-cluster.txt

OCNN with its defaults (`--min-cluster` N/10) against `--min-cluster` N/20 and N/40 (at least 5),
mean ARI per family, beside HDBSCAN with its defaults: the FCPS sets at seeds 1-3, seeds 0-2 of
clustering_quality.py's synthetic families, of ocnn_highdim.py's (30-D blobs of varied spread,
make_classification, 500 of the 8x8 digits) and of the 100- and 300-point families of
ocnn_sizes.py's generators. One JSON line per set, then the table."""
import os, sys, json, warnings
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clustering_quality import ocnn, synthetic, FCPS, FAMILIES, fcps_truth
from ocnn_sizes import make as sz_make
from ocnn_highdim import make as hd_make
from sklearn import datasets, cluster
from sklearn.preprocessing import StandardScaler
from sklearn.metrics import adjusted_rand_score as ari
from concurrent.futures import ThreadPoolExecutor
B = sys.argv[1]
divs = [int(x) for x in sys.argv[2].split(',')]  # 10 = default
def sets():
    for name, skip in FCPS:
        X = np.loadtxt(f'data/fcps/{name}.data')[skip:]
        y = fcps_truth('lib/data/fcps', name, len(X))
        for s in (1, 2, 3):
            yield 'FCPS', f'{name}', s, X, y
    for f in FAMILIES:
        for s in (0, 1, 2):
            X, y = synthetic(f, s)
            yield f, f'{f}-{s}', 1, StandardScaler().fit_transform(X), y
    for f in ['varied30d', 'classif30', 'digits']:
        for s in (0, 1, 2):
            X, y = hd_make(f, s)
            yield f, f'{f}-{s}', 1, X, y
    for f in ['circles', 'moons', 'varied', 'aniso', 'blobs']:
        for n in (100, 300):
            for s in (0, 1, 2):
                X, y = sz_make(f, n, s)
                yield f'{f}{n}', f'{f}{n}-{s}', 1, StandardScaler().fit_transform(X), y
def job(t):
    fam, name, s, X, y = t
    n = len(X); row = {'family': fam, 'set': name}
    for d in divs:
        extra = [] if d == 10 else ['--min-cluster', str(max(5, n // d))]
        row[f'n/{d}'] = ari(y, ocnn(B, X, s, extra))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore'); row['hdbscan'] = ari(y, cluster.HDBSCAN().fit_predict(X))
    print(json.dumps(row), flush=True)
    return row
with ThreadPoolExecutor(2) as ex:
    rows = list(ex.map(job, sets()))
fams = list(dict.fromkeys(r['family'] for r in rows))
keys = [k for k in rows[0] if k not in ('family', 'set')]
print('family'.ljust(12), *[k.rjust(8) for k in keys])
for f in fams:
    rs = [r for r in rows if r['family'] == f]
    print(f.ljust(12), *[f"{np.mean([r[k] for r in rs]):8.3f}" for k in keys])

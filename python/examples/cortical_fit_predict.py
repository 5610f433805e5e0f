"""The cortical network on scikit-learn's 8x8 digits: fit, transform, predict, save, load.

    python python/examples/cortical_fit_predict.py [cpu|cuda|auto] [DIGITS_CSV_GZ]
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

from neurobits import Cortical

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
path = Path(sys.argv[2] if len(sys.argv) > 2 else Path(__file__).resolve().parents[2] / "data" / "digits" / "digits.csv.gz")

a = np.loadtxt(path, delimiter=",")
x, y = a[:, :64].astype(np.float32), a[:, 64].astype(np.int64)
train = np.concatenate([np.flatnonzero(y == c)[:1] for c in range(10)])  # one image per class
test = np.concatenate([np.flatnonzero(y == c)[1:51] for c in range(10)])  # the next 50 of each

net = Cortical(device=device).fit(x[train], y[train])  # 3 levels x 16 minicolumns, 60 epochs
features = net.transform(x[test])
acc, nmi = net.score_nmi(x[test], y[test])
print(f"features {features.shape} (winner per hypercolumn); accuracy {acc:.4f}, NMI {nmi:.4f} on {len(test)} images")

with tempfile.TemporaryDirectory() as d:
    net.save(Path(d) / "digits.nbm")  # the file `neurobits cortical predict --model` reads
    again = Cortical.load(Path(d) / "digits.nbm")
assert np.array_equal(again.predict(x[test]), net.predict(x[test]))
print("saved and loaded: the same predictions")

"""FlyNN on Fashion-MNIST: fit, score, predict_proba, save, load; in a scikit-learn pipeline.

    python python/examples/flynn_fit_predict.py [cpu|cuda|auto] [FASHION_MNIST_FOLDER]
"""

import gzip
import sys
import tempfile
from pathlib import Path

import numpy as np

from neurobits import FlyNN

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
folder = Path(sys.argv[2] if len(sys.argv) > 2 else "/usr/share/datasets/fashion-mnist")


def idx(name, offset, shape):
    with gzip.open(folder / name) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset).reshape(shape)


x = idx("train-images-idx3-ubyte.gz", 16, (-1, 784)).astype(np.float32)
y = idx("train-labels-idx1-ubyte.gz", 8, (-1,)).astype(np.int64)
xt = idx("t10k-images-idx3-ubyte.gz", 16, (-1, 784)).astype(np.float32)
yt = idx("t10k-labels-idx1-ubyte.gz", 8, (-1,)).astype(np.int64)

clf = FlyNN(device=device).fit(x, y)  # the library defaults: m = 32·784 bits, k = m/250 winners, centred
print(f"accuracy {clf.score(xt, yt):.4f} on {len(yt)} test images ({len(clf.classes_)} classes)")
print("familiarity of image 0:", np.round(clf.predict_proba(xt[:1])[0], 3))

with tempfile.TemporaryDirectory() as d:
    clf.save(Path(d) / "flynn.nbm")  # the file `neurobits flynn predict --model` reads
    again = FlyNN.load(Path(d) / "flynn.nbm", device=device)
assert np.array_equal(again.predict(xt), clf.predict(xt))
print("saved and loaded: the same predictions")

try:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler
except ImportError:
    sys.exit(0)
pipe = make_pipeline(MinMaxScaler(), FlyNN(winners=64, device=device)).fit(x[:10000], y[:10000])
print(f"pipeline MinMaxScaler -> FlyNN(winners=64): accuracy {pipe.score(xt, yt):.4f}")

"""GPU ≡ CPU bit for bit through the Python package, every model (skipped without a CUDA GPU).

Runs under pytest or as a plain script (`python tests/test_gpu.py`), for the device machine
where pytest may be absent. Data: Fashion-MNIST from $NEUROBITS_FMNIST, else
/usr/share/datasets/fashion-mnist, else .bundle-py/fmnist; digits and FCPS from data/ or
.bundle-py/data.
"""

from __future__ import annotations

import gzip
import os
import sys
import time
from pathlib import Path

import numpy as np

import neurobits as nb

ROOT = Path(__file__).resolve().parents[2]
HAVE_GPU = nb.cuda_available()


def _first(*paths: Path) -> Path:
    for p in paths:
        if p.exists():
            return p
    raise FileNotFoundError(f"none of {', '.join(map(str, paths))} exists")


def _idx(path: Path) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        b = f.read()
    dims = [int.from_bytes(b[4 + 4 * i : 8 + 4 * i], "big") for i in range(b[3])]
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * b[3]).reshape(dims)


def _fmnist():
    d = _first(
        *([Path(os.environ["NEUROBITS_FMNIST"])] if "NEUROBITS_FMNIST" in os.environ else []),
        Path("/usr/share/datasets/fashion-mnist"),
        ROOT / ".bundle-py" / "fmnist",
    )
    x = _idx(d / "train-images-idx3-ubyte.gz").reshape(60000, 784).astype(np.float32)
    y = _idx(d / "train-labels-idx1-ubyte.gz").astype(np.int64)
    xt = _idx(d / "t10k-images-idx3-ubyte.gz").reshape(10000, 784).astype(np.float32)
    return x, y, xt


def _data(name: str) -> Path:
    return _first(ROOT / "data" / name, ROOT / ".bundle-py" / "data" / name)


def _both(make, run):
    """`run` of a model made for the CPU and for the GPU: (cpu result, gpu result, gpu seconds)."""
    cpu = run(make("cpu"))
    t = time.perf_counter()
    gpu = run(make("cuda"))
    return cpu, gpu, time.perf_counter() - t


def _equal(a, b) -> bool:
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (bytes, str, int, float)):
        return a == b
    return a.dtype == b.dtype and np.array_equal(a, b)


def _check(name: str, cpu, gpu, secs: float) -> None:
    ok = _equal(cpu, gpu)
    print(f"{name}: GPU {'==' if ok else '!='} CPU bit for bit ({secs:.2f} s on the GPU)", flush=True)
    assert ok, name


def _skip_without_gpu():
    if not HAVE_GPU:
        import pytest

        pytest.skip("needs a CUDA GPU")


def test_flyhash_fmnist():
    _skip_without_gpu()
    x, _, _ = _fmnist()
    cfg = dict(code_bits=25088, ones_per_row=39, winners=1254)
    _check("FlyHash Fashion-MNIST 60000 x 784, m=25088 s=39 k=1254",
           *_both(lambda d: nb.FlyHash(**cfg, device=d).fit(x), lambda h: h.transform(x)))
    _check("FlyHash bisect64 (10000 rows)",
           *_both(lambda d: nb.FlyHash(**cfg, wta="bisect64", device=d).fit(x), lambda h: h.transform(x[:10000])))


def test_flynn_and_index_fmnist():
    _skip_without_gpu()
    x, y, xt = _fmnist()

    def flynn(d):
        return nb.FlyNN(device=d).fit(x, y)

    _check("FlyNN fit (model bytes) + predict + predict_proba, Fashion-MNIST",
           *_both(flynn, lambda m: (m._model.to_bytes(), m.predict(xt), m.predict_proba(xt[:2000]))))

    def index(d):
        i = nb.FlyHashIndex(winners=64, device=d)
        i.add(x)
        return i

    def searches(i):
        # Twice from the resident upload, then after an add (which must drop it): the queries
        # added find themselves at distance 0.
        first, again = i.search(xt[:1000], k=10), i.search(xt[:1000], k=10)
        i.add(xt[:500])
        after = i.search(xt[:1000], k=10)
        assert (after[0][:500, 0] == 0).all() and all(60000 + j in after[1][j] for j in range(500))
        return (i.codes, *first, *again, *after)

    _check("FlyHashIndex add 60000 + search 1000 queries k=10 (twice, then after adding 500)",
           *_both(index, searches))


def test_gbnn_rules():
    _skip_without_gpu()
    rng = np.random.default_rng(2)
    c, l = 16, 512
    messages = rng.integers(0, l, size=(50000, c))
    probes = messages[:5000].copy()
    for row in probes:
        row[rng.choice(c, size=7, replace=False)] = -1
    mem = nb.GBNN(clusters=c, neurons=l).fit(messages)
    for rule in ("sum-of-sum", "sum-of-max", "bail-out-early", "joint"):
        _check(f"GBNN {c}x{l}, 50000 stored, 5000 probes, {rule}",
               *_both(lambda d: mem.set_params(rule=rule, device=d), lambda m: m.retrieve(probes, return_stats=True)))


def test_ocnn_lsun():
    _skip_without_gpu()
    points = np.loadtxt(_data("fcps/Lsun.data"), skiprows=3)
    keys = ("hits_sha256", "state_sha256", "k", "threshold_percent", "curve")

    def run(m):
        return (m.labels_, [str(m.report_[k]) for k in keys])

    _check("OCNN Lsun (400 points, 1000 iterations)", *_both(lambda d: nb.OCNN(device=d).fit(points), run))


def test_cortical_digits():
    _skip_without_gpu()
    a = np.loadtxt(_data("digits/digits.csv.gz"), delimiter=",")
    x, y = a[:, :64].astype(np.float32), a[:, 64].astype(np.int64)
    train = np.concatenate([np.flatnonzero(y == c)[:10] for c in range(10)])
    _check("Cortical digits (100 images, 20 epochs): model bytes + predict",
           *_both(lambda d: nb.Cortical(device=d).fit(x[train], y[train]),
                  lambda m: (m._model.to_bytes(), m.predict(x[:500]))))


def test_auto_uses_the_gpu_with_the_same_bits():
    _skip_without_gpu()
    x = np.random.default_rng(3).random((500, 64), dtype=np.float32)
    h = nb.FlyHash(code_bits=2048, winners=64).fit(x)
    _check("FlyHash device=auto", h.transform(x), h.set_params(device="auto").transform(x), 0.0)
    _check("FlyHash device=cuda:0", h.set_params(device="cpu").transform(x), h.set_params(device="cuda:0").transform(x), 0.0)


if __name__ == "__main__":
    if not HAVE_GPU:
        print("no CUDA GPU: nothing to test")
        sys.exit(0)
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_") and callable(v)]
    failed = 0
    for t in tests:
        try:
            t()
        except AssertionError as e:
            failed += 1
            print(f"FAILED {t.__name__}: {e}", flush=True)
    print(f"{len(tests) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)

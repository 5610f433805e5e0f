"""The Python layer against the Rust API, and FlyNN beside scikit-learn's k-NN.

1. FlyHash on the Fashion-MNIST configuration of `neurobits flyhash bench --config fmnist`
   (60 000 × 784, m = 25 088, s = 39, k = 1 254): `FlyHash.transform(X)` from Python (input
   checks, the copy into the library's matrix, chunks with Ctrl-C checks, the numpy output)
   against the library's `FlyHash::transform` timed inside Rust on a matrix built beforehand.
2. GBNN Scenario 2 of `gbnn bench` (C = 16, L = 512, 50 000 messages stored, 30 000 probes of
   stored messages with 7 clusters erased, γ = 2): `GBNN.retrieve` against `Gbnn::retrieve`.
3. FlyNN (defaults: m = 32·d, k = m/250) beside `KNeighborsClassifier` (k = 5, brute force, all
   cores) on Fashion-MNIST: fit and predict times, test accuracy.

Each timing is the median of --repeats runs, Python and Rust alternating (after one warm-up). Usage:
    python python/bench.py [--device cpu|cuda] [--repeats 3] [--knn-test 10000] [--out FILE]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

# This file sits beside the package's sources (python/neurobits, without the compiled
# extension): import the installed package, not them.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import neurobits as nb  # noqa: E402
from neurobits import _neurobits  # noqa: E402


def idx(path: Path) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        b = f.read()
    dims = [int.from_bytes(b[4 + 4 * i : 8 + 4 * i], "big") for i in range(b[3])]
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * b[3]).reshape(dims)


def fashion_mnist(folder: Path):
    x = idx(folder / "train-images-idx3-ubyte.gz").reshape(60000, 784).astype(np.float32)
    y = idx(folder / "train-labels-idx1-ubyte.gz").astype(np.int64)
    xt = idx(folder / "t10k-images-idx3-ubyte.gz").reshape(10000, 784).astype(np.float32)
    yt = idx(folder / "t10k-labels-idx1-ubyte.gz").astype(np.int64)
    return x, y, xt, yt


def paired(python_call, rust_seconds, repeats: int):
    """Median seconds of the Python call and of the Rust call, run alternately (so that any other
    load on the machine falls on both alike), after one warm-up of each."""
    python_call()
    rust_seconds()
    py, rust = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        python_call()
        py.append(time.perf_counter() - t)
        rust.append(rust_seconds())
    return statistics.median(py), statistics.median(rust)


def row(name: str, py: float, rust: float) -> dict:
    over = (py - rust) / rust * 100
    print(f"{name:<44} python {py:8.3f} s   rust API {rust:8.3f} s   python layer {over:+6.2f} %", flush=True)
    return {"benchmark": name, "python_seconds": py, "rust_seconds": rust, "overhead_percent": over}


def bench_flyhash(x: np.ndarray, device: str, repeats: int) -> dict:
    h = nb.FlyHash(code_bits=25088, ones_per_row=39, winners=1254, device=device).fit(x)
    py, rust = paired(lambda: h.transform(x), lambda: _neurobits.time_transform(h._model, x, device), repeats)
    return row(f"FlyHash fmnist 60000x784 m=25088 ({device})", py, rust)


def bench_gbnn(device: str, repeats: int) -> dict:
    rng = np.random.default_rng(2)
    c, l, stored, probes, erased = 16, 512, 50_000, 30_000, 7
    messages = rng.integers(0, l, size=(stored, c))
    p = messages[rng.choice(stored, size=probes, replace=False)].copy()
    cols = np.argsort(rng.random((probes, c)), axis=1)[:, :erased]
    np.put_along_axis(p, cols, -1, axis=1)
    mem = nb.GBNN(clusters=c, neurons=l, gamma=2, device=device).fit(messages)
    out = {}
    for rule in ("sum-of-sum", "joint"):
        mem.set_params(rule=rule)
        probes64 = np.ascontiguousarray(p, dtype=np.int64)
        # The Rust side gets the options the Python call passes (rule, γ, t_max): a bench that
        # let it read the stored configuration timed the constructor's rule instead.
        py, rust = paired(
            lambda: mem.retrieve(probes64),
            lambda: _neurobits.time_retrieve(mem._model, probes64, device, mem._rule(), mem.gamma, mem.max_iter),
            repeats,
        )
        out[rule] = row(f"GBNN scenario 2, {rule} ({device})", py, rust)
    return out


def bench_knn(x, y, xt, yt, device: str, n_test: int) -> list:
    rows = []
    xt, yt = xt[:n_test], yt[:n_test]
    t = time.perf_counter()
    clf = nb.FlyNN(device=device).fit(x, y)
    fit = time.perf_counter() - t
    t = time.perf_counter()
    acc = float((clf.predict(xt) == yt).mean())
    pred = time.perf_counter() - t
    rows.append({"model": f"neurobits FlyNN ({device})", "fit_seconds": fit, "predict_seconds": pred, "accuracy": acc})
    try:
        from sklearn.neighbors import KNeighborsClassifier
    except ImportError:
        print("scikit-learn is not installed: no k-NN row")
    else:
        t = time.perf_counter()
        knn = KNeighborsClassifier(n_neighbors=5, algorithm="brute", n_jobs=-1).fit(x, y)
        fit = time.perf_counter() - t
        t = time.perf_counter()
        acc = float((knn.predict(xt) == yt).mean())
        pred = time.perf_counter() - t
        rows.append({"model": "scikit-learn KNeighborsClassifier(k=5, brute)", "fit_seconds": fit, "predict_seconds": pred, "accuracy": acc})
    for r in rows:
        print(f"{r['model']:<46} fit {r['fit_seconds']:7.2f} s   predict {r['predict_seconds']:7.2f} s   accuracy {r['accuracy']:.4f}  ({len(yt)} test images)", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data", default=os.environ.get("NEUROBITS_FMNIST", "/usr/share/datasets/fashion-mnist"))
    ap.add_argument("--knn-test", type=int, default=10000, help="test images for the FlyNN / k-NN comparison (0: skip it)")
    ap.add_argument("--out", help="also write the results as JSON here")
    a = ap.parse_args()
    x, y, xt, yt = fashion_mnist(Path(a.data))
    host = f"{platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}"
    print(f"neurobits {nb.library_version} on {host}", flush=True)
    report = {"host": host, "library": nb.library_version, "device": a.device}
    report["flyhash"] = bench_flyhash(x, a.device, a.repeats)
    report["gbnn"] = bench_gbnn(a.device, a.repeats)
    if a.knn_test:
        report["flynn_vs_knn"] = bench_knn(x, y, xt, yt, a.device, a.knn_test)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))
    from _meta import meta

    report["meta"] = meta({"GBNN messages and probes (numpy default_rng)": 2, "FlyHash seed": 1})
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""neurobits beside the peers a Python user would pick instead, called from Python, in one run.

- **faiss**: ``FlyHashIndex.search`` against ``faiss.IndexBinaryFlat`` (exact Hamming k-NN, the
  faiss index for binary codes) on the *same* FlyHash codes of Fashion-MNIST, both on every core
  of the machine. faiss gets the query codes precomputed; our timed call hashes the queries
  too (the call a user makes), so the ratio is conservative for us. The neighbours' distances
  are checked equal (faiss breaks ties in its own order, so ids are not compared).
- **PyTorch**: ``FlyHash.transform`` against FlyHash written in PyTorch at its best (projection
  and inputs resident on the device in each precision before timing, one matrix product and an
  unsorted ``topk``; TF32 off so fp32 is exact; fp16 is not exact and its codes are counted
  against ours), on the device asked for. Skipped, with a line saying so, where torch (or, for
  ``cuda``, a CUDA device for it) is missing.

Medians over ``--repeats`` after one warm-up each. Writes a JSON with ``meta`` (commit, command
line, devices, library versions, seeds) when ``--out`` is given.

    python python/bench_peers.py [--device cpu|cuda] [--queries 200] [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

# Beside the package's sources: import the installed package, not them (as bench.py does).
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))

import neurobits as nb  # noqa: E402
from _idx import idx  # noqa: E402
from _meta import meta  # noqa: E402

# The Fashion-MNIST configuration of the README's FlyHash figures (m = 32·784, k = m/20).
FMNIST = dict(code_bits=25088, ones_per_row=39, winners=1254, seed=1)


def median_seconds(call, repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_faiss(x: np.ndarray, q: np.ndarray, k: int, device: str, repeats: int) -> dict:
    try:
        import faiss
    except ImportError:
        print("faiss is not installed (pip install faiss-cpu): no faiss row", flush=True)
        return {"skipped": "faiss not installed"}
    threads = os.cpu_count() or 1
    faiss.omp_set_num_threads(threads)
    index = nb.FlyHashIndex(**FMNIST, device=device)
    index.add(x)
    codes = np.ascontiguousarray(index.codes, dtype="<u8").view(np.uint8)
    qcodes = np.ascontiguousarray(nb.FlyHash(**FMNIST).fit(x).transform(q), dtype="<u8").view(np.uint8)
    peer = faiss.IndexBinaryFlat(codes.shape[1] * 8)
    peer.add(codes)
    ours_s = median_seconds(lambda: index.search(q, k), repeats)
    peer_s = median_seconds(lambda: peer.search(qcodes, k), repeats)
    d_ours, _ = index.search(q, k)
    d_peer, _ = peer.search(qcodes, k)
    same = bool((d_ours.astype(np.int64) == d_peer.astype(np.int64)).all())
    row = {"benchmark": f"exact Hamming {k}-NN, {len(q)} queries over {len(x)} codes of {FMNIST['code_bits']} bits",
           "neurobits": f"FlyHashIndex.search ({device}, queries hashed inside the call)", "neurobits_seconds": ours_s,
           "peer": f"faiss {faiss.__version__} IndexBinaryFlat ({threads} threads, query codes precomputed)", "peer_seconds": peer_s,
           "ratio": peer_s / ours_s, "distances_equal": same}
    print(f"{row['benchmark']}: neurobits {ours_s * 1e3:.1f} ms, faiss {peer_s * 1e3:.1f} ms -> {row['ratio']:.2f}x; "
          f"distances equal: {same}", flush=True)
    return row


def bench_torch(x: np.ndarray, device: str, repeats: int) -> list:
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: no PyTorch row", flush=True)
        return [{"skipped": "torch not installed"}]
    dev = torch.device("cuda" if device.startswith("cuda") else "cpu")
    if dev.type == "cuda" and not torch.cuda.is_available():
        print("PyTorch sees no CUDA device: no PyTorch row", flush=True)
        return [{"skipped": "no CUDA device for torch"}]
    torch.backends.cuda.matmul.allow_tf32 = False
    h = nb.FlyHash(**FMNIST, device=device).fit(x)
    ours = h.transform(x)
    ours_s = median_seconds(lambda: h.transform(x), repeats)
    rows_idx = torch.from_numpy(h.projection_.astype(np.int64)).to(dev)
    m, s = rows_idx.shape
    p = torch.zeros(m, x.shape[1], device=dev)
    p[torch.arange(m, device=dev).repeat_interleave(s), rows_idx.ravel()] = 1.0
    k, words, n = FMNIST["winners"], ours.shape[1], len(x)
    out = []
    for name, dtype in (("fp16", torch.float16), ("fp32", torch.float32)):
        if dev.type == "cpu" and dtype == torch.float16:
            continue  # no fast fp16 matrix product on a CPU: not what a user would pick there
        pt, xs = p.to(dtype).T.contiguous(), torch.from_numpy(x).to(dev).to(dtype)

        def flyhash():
            win = torch.topk(xs @ pt, k, dim=1, sorted=False).indices
            if dev.type == "cuda":
                torch.cuda.synchronize()
            return win

        peer_s = median_seconds(flyhash, repeats)

        def from_numpy():
            # What the neurobits call does: numpy in, the winners back in host memory.
            xd = torch.from_numpy(x).to(dev).to(dtype)
            return torch.topk(xd @ pt, k, dim=1, sorted=False).indices.cpu()

        numpy_s = median_seconds(from_numpy, repeats)
        w = flyhash().cpu().numpy().astype(np.int64)
        codes = np.zeros((n, words), dtype=np.uint64)
        np.bitwise_or.at(codes, (np.repeat(np.arange(n), k), (w // 64).ravel()), np.left_shift(np.uint64(1), (w % 64).ravel().astype(np.uint64)))
        same = int((codes == ours).all(axis=1).sum())
        row = {"benchmark": f"FlyHash Fashion-MNIST {n}x{x.shape[1]}, m={m}, k={k}", "neurobits": f"FlyHash.transform ({device}, codes returned to numpy)",
               "neurobits_seconds": ours_s, "peer": f"PyTorch {torch.__version__} {name} on {dev} (resident, unsorted topk, winners as indices)",
               "peer_seconds": peer_s, "ratio": peer_s / ours_s, "peer_numpy_to_host_seconds": numpy_s,
               "ratio_numpy_to_host": numpy_s / ours_s, "codes_identical": same, "codes": n}
        print(f"{row['benchmark']}: neurobits {ours_s * 1e3:.1f} ms (numpy in, codes out), PyTorch {name} {peer_s * 1e3:.1f} ms resident "
              f"-> {row['ratio']:.2f}x, {numpy_s * 1e3:.1f} ms numpy in, winners out -> {row['ratio_numpy_to_host']:.2f}x; "
              f"codes identical {same} of {n}", flush=True)
        out.append(row)
        del pt, xs
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto (for neurobits and PyTorch)")
    ap.add_argument("--data", default=os.environ.get("NEUROBITS_FMNIST", "/usr/share/datasets/fashion-mnist"))
    ap.add_argument("--queries", type=int, default=200, help="test images searched in the faiss comparison")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-torch", action="store_true", help="no PyTorch comparison (it needs minutes on a small CPU)")
    ap.add_argument("--out", help="also write the results as JSON here")
    a = ap.parse_args()
    folder = Path(a.data)
    x = idx(str(folder / "train-images-idx3-ubyte.gz")).reshape(60000, 784).astype(np.float32)
    q = idx(str(folder / "t10k-images-idx3-ubyte.gz")).reshape(10000, 784).astype(np.float32)[: a.queries]
    print(f"neurobits {nb.library_version}, {os.cpu_count()} cores, device {a.device}", flush=True)
    report = {"faiss": bench_faiss(x, q, 10, a.device, a.repeats)}
    report["torch"] = [{"skipped": "--skip-torch"}] if a.skip_torch else bench_torch(x, a.device, a.repeats)
    report["meta"] = meta({"FlyHash seed": FMNIST["seed"]}, neurobits_device=a.device)
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()

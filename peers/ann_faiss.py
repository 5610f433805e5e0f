#!/usr/bin/env python3
"""faiss on an ann-benchmarks file (`neurobits flyhash ann-data`, or ann-benchmarks' own), in the
row format of `neurobits flyhash ann-bench`: one JSON array of
{algorithm, params, device, k, recall, qps, build_s, n_train, n_test}.

Indexes (each built once, then its search knob swept):
  IndexHNSWFlat        M=32, efConstruction=40 (faiss's default); efSearch swept
  IndexIVFFlat         nlist=512 (k-means, faiss's defaults); nprobe swept
  IndexLSH             nbits in --lsh-bits, rotation + trained thresholds; plain Hamming ranking,
                       and IndexRefineFlat over it (k_factor*k candidates re-ranked by exact L2:
                       faiss's own re-ranking, timed in the same search call)
  IndexBinaryHNSW      on the fly codes of `neurobits flyhash hash` (seed 1), one index per
                       --fly-codes setting: `default` is the library's FlyHash default (m = 32 d
                       bits, s = d/20, k = m/20 winners: the codes of our index), M:S:K another
                       (1280:78:64 is flyhash eval's best); plain Hamming ranking, and with
                       k_factor*k candidates re-ranked by exact L2 in numpy (timed with the
                       search; faiss has no refine stage for an external binary code). The
                       queries' codes are made before the clock starts (hashing is not timed);
                       hashing the points counts in build_s. Algorithm names carry m
                       (faiss-IndexBinaryHNSW-fly25088).

Timing: faiss.omp_set_num_threads(--threads); a warm-up search on the first 200 queries, then
--runs search calls over all queries (default 1), the fastest reported (ann-benchmarks' --runs;
`flyhash ann-bench --runs` likewise). Recall@k is ann-benchmarks' ("knn"): a returned point counts
when its true distance is at most the k-th true neighbour's distance + 1e-3.

    python3 peers/ann_faiss.py --data F.hdf5 --bin target/release/neurobits --out R.json
"""
import argparse, json, os, subprocess, sys, tempfile, time

import faiss
import h5py
import numpy as np

EPS = 1e-3


def recall(train, test, true_dist, found, k):
    """ann-benchmarks' recall@k: the returned ids' distances (float64) against the k-th truth."""
    hits = 0
    for i in range(0, test.shape[0], 500):
        ids = found[i:i + 500, :k]
        q = test[i:i + 500].astype(np.float64)
        valid = ids >= 0
        pts = train[np.where(valid, ids, 0)].astype(np.float64)
        d = np.sqrt(((pts - q[:, None, :]) ** 2).sum(-1))
        thr = true_dist[i:i + 500, k - 1].astype(np.float64)[:, None] + EPS
        hits += int(((d <= thr) & valid).sum())
    return hits / (test.shape[0] * k)


RUNS = 1


def timed(search, test):
    """The fastest of RUNS search calls over all queries (ann-benchmarks' --runs), after a warm-up."""
    search(test[:200])  # warm-up: page faults, thread pool, caches
    best = float("inf")
    for _ in range(RUNS):
        t = time.perf_counter()
        ids = search(test)
        best = min(best, time.perf_counter() - t)
    return ids, best


def rerank(train, test, cand, k):
    """The k nearest of each query's candidates by exact L2 (float32, numpy), chunked."""
    out = np.empty((test.shape[0], k), dtype=np.int64)
    for i in range(0, test.shape[0], 256):
        c = cand[i:i + 256]
        pts = train[np.maximum(c, 0)]
        d = ((pts - test[i:i + 256, None, :]) ** 2).sum(-1)
        d[c < 0] = np.inf
        o = np.argsort(d, axis=1, kind="stable")[:, :k]
        out[i:i + 256] = np.take_along_axis(c, o, 1)
    return out


def fly_codes(binary, x, path, m, s, k, seed):
    npy = path + ".npy"
    np.save(npy, np.ascontiguousarray(x, dtype=np.float32))
    cmd = [binary, "-q", "flyhash", "hash", "-i", npy, "--code-bits", str(m), "--ones-per-row", str(s),
           "--winners", str(k), "--seed", str(seed), "-o", path]
    subprocess.run(cmd, check=True)
    b = open(path, "rb").read()
    assert b[:8] == b"NBFLYHSH", path
    mm, n = int.from_bytes(b[12:16], "little"), int.from_bytes(b[16:24], "little")
    words = (mm + 63) // 64
    return np.frombuffer(b[24:], dtype="<u8").reshape(n, words).view(np.uint8).reshape(n, words * 8).copy()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="ann-benchmarks HDF5 file")
    ap.add_argument("--bin", required=True, help="the neurobits binary (fly codes)")
    ap.add_argument("--out", required=True, help="JSON rows")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--ef-search", default="10,16,32,64,128,256")
    ap.add_argument("--nprobe", default="1,2,4,8,16,32,64")
    ap.add_argument("--lsh-bits", default="256,1024,2048")
    ap.add_argument("--k-factors", default="4,16,64", help="re-ranking candidates per neighbour")
    ap.add_argument("--fly-codes", default="default", help="default or M:S:K, comma-separated")
    ap.add_argument("--runs", type=int, default=1, help="timed search calls per setting; the fastest counts")
    ap.add_argument("--only", default="hnsw,ivf,lsh,binhnsw")
    a = ap.parse_args()
    global RUNS
    RUNS = max(a.runs, 1)
    ints = lambda s: [int(v) for v in s.split(",") if v]
    faiss.omp_set_num_threads(a.threads)
    with h5py.File(a.data, "r") as f:
        train = np.ascontiguousarray(f["train"][:], dtype=np.float32)
        test = np.ascontiguousarray(f["test"][:], dtype=np.float32)
        true_dist = f["distances"][:]
        metric = f.attrs.get("distance")
    if isinstance(metric, bytes):
        metric = metric.decode()
    if metric != "euclidean":
        sys.exit(f"error: {a.data}: distance attribute {metric!r}, this peer measures euclidean only")
    k, (n, d), nq = a.k, train.shape, test.shape[0]
    device = f"cpu ({a.threads} thread{'s' if a.threads > 1 else ''})"
    rows = []

    def row(alg, params, ids, secs, build):
        r = {"algorithm": alg, "params": params, "device": device, "k": k,
             "recall": round(recall(train, test, true_dist, ids, k), 5), "qps": round(nq / secs, 2),
             "build_s": round(build, 3), "n_train": n, "n_test": nq}
        rows.append(r)
        print(f"{alg:<28} {params:<34} recall {r['recall']:.4f}  {r['qps']:>10.1f} q/s  build {build:.1f} s",
              file=sys.stderr, flush=True)

    def build(make):
        t = time.perf_counter()
        idx = make()
        return idx, time.perf_counter() - t

    only = a.only.split(",")
    if "hnsw" in only:
        def make():
            idx = faiss.IndexHNSWFlat(d, 32)
            idx.hnsw.efConstruction = 40
            idx.add(train)
            return idx
        idx, b = build(make)
        for ef in ints(a.ef_search):
            idx.hnsw.efSearch = ef
            ids, secs = timed(lambda q: idx.search(q, k)[1], test)
            row("faiss-IndexHNSWFlat", f"M=32,efConstruction=40,efSearch={ef}", ids, secs, b)
    if "ivf" in only:
        quantizer = faiss.IndexFlatL2(d)  # held here: the IVF index points at it

        def make():
            idx = faiss.IndexIVFFlat(quantizer, d, 512)
            idx.train(train)
            idx.add(train)
            return idx
        idx, b = build(make)
        for p in ints(a.nprobe):
            idx.nprobe = p
            ids, secs = timed(lambda q: idx.search(q, k)[1], test)
            row("faiss-IndexIVFFlat", f"nlist=512,nprobe={p}", ids, secs, b)
    if "lsh" in only:
        for bits in ints(a.lsh_bits):
            def make():
                idx = faiss.IndexLSH(d, bits, True, True)
                idx.train(train)
                idx.add(train)
                return idx
            lsh, b = build(make)
            ids, secs = timed(lambda q: lsh.search(q, k)[1], test)
            row("faiss-IndexLSH", f"nbits={bits}", ids, secs, b)
            t = time.perf_counter()
            ref = faiss.IndexRefineFlat(lsh, faiss.swig_ptr(train))
            b2 = b + time.perf_counter() - t
            for kf in ints(a.k_factors):
                ref.k_factor = kf
                ids, secs = timed(lambda q: ref.search(q, k)[1], test)
                row("faiss-IndexLSH+refine", f"nbits={bits},k_factor={kf}", ids, secs, b2)
    for setting in a.fly_codes.split(",") if "binhnsw" in only else []:
        if setting == "default":
            m, s, w = 32 * d, max(d // 20, 1), 32 * d // 20
        else:
            m, s, w = (int(v) for v in setting.split(":"))
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            db = fly_codes(a.bin, train, os.path.join(tmp, "train.fly"), m, s, w, 1)
            hash_s = time.perf_counter() - t
            qc = fly_codes(a.bin, test, os.path.join(tmp, "test.fly"), m, s, w, 1)

        def make():
            idx = faiss.IndexBinaryHNSW(db.shape[1] * 8, 32)  # whole words of the code file
            idx.add(db)
            return idx
        idx, b = build(make)
        b += hash_s  # the index is of codes: hashing the points is part of building it
        fly = f"fly m={m},k={w},s={s}"
        for ef in ints(a.ef_search):
            idx.hnsw.efSearch = ef
            ids, secs = timed(lambda q: idx.search(qc if q.shape[0] == nq else qc[:q.shape[0]], k)[1], test)
            row(f"faiss-IndexBinaryHNSW-fly{m}", f"{fly},M=32,efSearch={ef}", ids, secs, b)
        for kf in ints(a.k_factors):
            for ef in [e for e in ints(a.ef_search) if e >= k * kf][:3] or [k * kf]:
                idx.hnsw.efSearch = ef

                def search(q):
                    cand = idx.search(qc[:q.shape[0]], k * kf)[1]
                    return rerank(train, q, cand, k)
                ids, secs = timed(search, test)
                row(f"faiss-IndexBinaryHNSW-fly{m}+rerank", f"{fly},M=32,efSearch={ef},k_factor={kf}", ids, secs, b)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()

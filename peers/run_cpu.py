#!/usr/bin/env python3
"""`make peers`: neurobits' CPU FlyHash next to the peers a user would pick instead, in one run,
one thread each, on the same Fashion-MNIST images; prints the seconds and the ratios.

- hashing (d=784, m=25 088, s=39, k=1 254 — flyhash.jl's configuration) of the first N training
  images: `neurobits flyhash hash` (whole process: reading the NPY, hashing, writing the codes)
  against peers/flyhash_numpy.py (the hashing alone, inputs already in memory);
- search: 1 000 query codes (test images 6000..6999) against 6 000 codes (test images 0..5999),
  top 100: `neurobits flyhash search` (whole process) against faiss IndexBinaryFlat (the search
  alone), results checked equal.

Our side is timed as a whole process and theirs as the computation alone, so the ratios
understate ours.

    python3 peers/run_cpu.py NEUROBITS_BINARY FASHION_MNIST_DIR OUT_DIR [N]
"""
import gzip, os, re, subprocess, sys, time

import numpy as np


def images(path):
    b = gzip.open(path).read()
    return np.frombuffer(b[16:], dtype=np.uint8).reshape(-1, 784).astype(np.float32)


def timed(cmd, env=None):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    return time.perf_counter() - t


def peer(script, *args):
    out = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), script), *args],
                         check=True, capture_output=True, text=True).stdout
    print("   ", out.strip().replace("\n", "\n    "))
    return float(re.search(r": ([0-9.]+) s", out).group(1)), out


def main():
    nb, data, out = sys.argv[1], sys.argv[2], sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 10000
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    train, test = images(f"{data}/train-images-idx3-ubyte.gz"), images(f"{data}/t10k-images-idx3-ubyte.gz")
    np.save(f"{out}/train.npy", train[:n])
    np.save(f"{out}/db.npy", test[:6000])
    np.save(f"{out}/queries.npy", test[6000:7000])
    proj = f"{out}/proj.csv"
    subprocess.run([nb, "flyhash", "projection", "--d", "784", "--m", "25088", "--s", "39", "--out", proj], check=True)
    hash_cmd = lambda x, o: [nb, "flyhash", "hash", "--input", x, "--projection", proj, "--k", "1254", "--device", "cpu", "--out", o]

    print(f"hashing {n} Fashion-MNIST training images (d=784, m=25088, s=39, k=1254), 1 thread:")
    ours = timed(hash_cmd(f"{out}/train.npy", f"{out}/train.bin"), env)
    print(f"    neurobits flyhash hash (whole process): {ours:.3f} s")
    theirs, _ = peer("flyhash_numpy.py", f"{out}/train.npy", proj, "1254", f"{out}/train.bin")
    print(f"    => neurobits is {theirs / ours:.1f}x the numpy/scipy peer")

    print("searching 1000 query codes against 6000 codes of 25088 bits, top 100, 1 thread:")
    for x in ("db", "queries"):
        subprocess.run(hash_cmd(f"{out}/{x}.npy", f"{out}/{x}.bin"), check=True, env=env)
    ours = timed([nb, "flyhash", "search", "--db", f"{out}/db.bin", "--queries", f"{out}/queries.bin", "--r", "100",
                  "--out", f"{out}/search.csv"], env)
    print(f"    neurobits flyhash search (whole process): {ours:.3f} s")
    theirs, text = peer("faiss_search.py", f"{out}/db.bin", f"{out}/queries.bin", "100", f"{out}/search.csv")
    if "True" not in text:
        sys.exit("faiss and neurobits disagree")
    print(f"    => neurobits is {theirs / ours:.1f}x faiss IndexBinaryFlat")


if __name__ == "__main__":
    main()

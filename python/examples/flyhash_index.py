"""FlyHash codes and an exact Hamming index of Fashion-MNIST: add, search, save, append.

    python python/examples/flyhash_index.py [cpu|cuda|auto] [FASHION_MNIST_FOLDER]
"""

import gzip
import sys
import tempfile
from pathlib import Path

import numpy as np

from neurobits import FlyHash, FlyHashIndex

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
folder = Path(sys.argv[2] if len(sys.argv) > 2 else "/usr/share/datasets/fashion-mnist")


def images(name):
    with gzip.open(folder / name) as f:
        return np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784).astype(np.float32)


x, q = images("train-images-idx3-ubyte.gz")[:20000], images("t10k-images-idx3-ubyte.gz")[:100]

codes = FlyHash(code_bits=4096, winners=64, device=device).fit_transform(x)  # uint64 words
print(f"codes: {codes.shape} uint64 words, {int(np.unpackbits(codes[:1].view(np.uint8)).sum())} ones each")

index = FlyHashIndex(code_bits=4096, winners=64, device=device)
index.add(x)
distances, ids = index.search(q, k=5)
print(f"index of {index.ntotal} codes; query 0's neighbours {ids[0].tolist()} at distances {distances[0].tolist()}")

with tempfile.TemporaryDirectory() as d:
    path = Path(d) / "fmnist.nbi"
    index.save(path)  # what `neurobits flyhash index search --index` reads
    print("appended ids", FlyHashIndex.append(path, q, device=device))
    again = FlyHashIndex.load(path, device=device)
assert again.ntotal == 20100
assert np.array_equal(again.search(q, k=5)[1][:, 0], np.arange(20000, 20100))  # each query finds itself
print("saved, appended, loaded: each appended query finds itself first")

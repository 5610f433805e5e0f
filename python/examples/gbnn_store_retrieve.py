"""GBNN: store random messages, erase half of each, retrieve them; save, load, pickle.

    python python/examples/gbnn_store_retrieve.py [cpu|cuda|auto]
"""

import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np

from neurobits import GBNN

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
rng = np.random.default_rng(0)
messages = rng.integers(0, 128, size=(5000, 8))  # 5000 messages of 8 symbols in 0..127
probes = messages[:1000].copy()
probes[:, 4:] = -1  # erase the last 4 clusters

memory = GBNN(clusters=8, neurons=128, rule="joint", device=device).fit(messages)
states, symbols = memory.retrieve(probes)
print(f"{memory.n_stored_} messages stored; {np.mean((symbols == messages[:1000]).all(axis=1)):.3f} of 1000 probes retrieved exactly")

with tempfile.TemporaryDirectory() as d:
    memory.save(Path(d) / "gbnn.nbm")  # the file `neurobits gbnn retrieve --net` reads
    again = GBNN.load(Path(d) / "gbnn.nbm", device=device)
assert np.array_equal(again.retrieve(probes)[0], states)
assert np.array_equal(pickle.loads(pickle.dumps(memory)).predict(probes), symbols)
print("saved, loaded and pickled: the same states")

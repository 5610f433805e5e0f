"""The package without scikit-learn, Ctrl-C during a long call, threads while Rust computes."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import neurobits as nb

NO_SKLEARN = r"""
import sys, pickle
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "sklearn" or name.startswith("sklearn."):
            raise ImportError("blocked for the test")
sys.meta_path.insert(0, Block())
import numpy as np
import neurobits as nb
assert not nb._base.HAVE_SKLEARN
X = np.random.default_rng(0).random((20, 6), dtype=np.float32)
clf = nb.FlyNN(code_bits=128, winners=8).fit(X, np.arange(20) % 2)
assert clf.get_params()["code_bits"] == 128 and clf.set_params(decay=0.5).decay == 0.5
assert repr(clf) == "FlyNN(code_bits=128, decay=0.5, winners=8)", repr(clf)
assert 0 <= clf.score(X, np.arange(20) % 2) <= 1
assert pickle.loads(pickle.dumps(clf)).predict(X).shape == (20,)
assert nb.FlyHash(code_bits=64, winners=4).fit_transform(X).shape == (20, 1)
assert nb.OCNN(iters=50, threshold=50).fit_predict(X).shape == (20,)
try:
    nb.FlyNN().predict(X)
except nb.NotFittedError as e:
    assert isinstance(e, ValueError) and isinstance(e, AttributeError)
else:
    raise AssertionError("no NotFittedError")
print("ok")
"""


def test_imports_and_works_without_sklearn():
    r = subprocess.run([sys.executable, "-c", NO_SKLEARN], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_ctrl_c_interrupts_a_long_transform():
    # Many chunks of work: a SIGINT a moment in stops the call between two of them.
    x = np.random.default_rng(1).random((40000, 784), dtype=np.float32)
    h = nb.FlyHash(code_bits=25088, ones_per_row=39, winners=1254).fit(x[:1])
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), 2))
    t = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        h.transform(x)
    took = time.perf_counter() - t
    timer.join()
    assert took < 5, f"took {took:.1f} s to stop"


def test_gil_released_while_computing():
    x = np.random.default_rng(2).random((3000, 784), dtype=np.float32)
    h = nb.FlyHash(code_bits=8192, winners=400).fit(x)
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    th = threading.Thread(target=tick)
    th.start()
    t0 = time.perf_counter()
    h.transform(x)
    t1 = time.perf_counter()
    stop.set()
    th.join()
    during = [t for t in ticks if t0 < t < t1]
    # Python code ran during the call: at least a tick per 50 ms of it.
    assert len(during) >= max(1, int((t1 - t0) / 0.05)), (len(during), t1 - t0)

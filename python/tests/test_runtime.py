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


def test_ctrl_c_interrupts_a_long_cortical_fit(digits):
    # One library call (no chunks): the call runs on a worker under a cancel token, and the
    # training loop stops at its next image once Ctrl-C is seen. Uninterrupted, 10 000 epochs
    # of the default network would take many minutes; the model keeps its earlier fit.
    x, y = digits
    net = nb.Cortical(epochs=2).fit(x[:100], y[:100])
    before = net.predict(x[:50])
    net.set_params(epochs=10000)
    assert_interrupted(lambda: net.fit(x, y))
    assert (net.predict(x[:50]) == before).all()


def test_ctrl_c_interrupts_a_long_ocnn_fit():
    # 3 000 random 2-D points for 10^6 iterations: minutes uninterrupted; stopped between two.
    x = np.random.default_rng(3).random((3000, 2))
    model = nb.OCNN(iters=1_000_000)
    assert_interrupted(lambda: model.fit(x))
    assert not hasattr(model, "labels_")


def assert_interrupted(call):
    """`call` raises KeyboardInterrupt from a SIGINT sent 0.5 s in, within 5 s; the timer never
    outlives the test (a late SIGINT would stop the whole session)."""
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), 2))
    t = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
        timer.join()
    took = time.perf_counter() - t
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



def _sharing(m, **params):
    """Another estimator over the same fitted Rust model as `m`, with other parameters."""
    v = object.__new__(type(m))
    v.__dict__.update(m.__dict__)
    v.__dict__.update(params)
    return v


def test_one_model_serves_several_threads():
    """Read-only verbs take the model shared (no "Already borrowed"), and each thread's answer
    equals the serial one, even with other retrieval options per thread."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(5)
    msgs = rng.integers(0, 64, size=(2000, 8))
    probes = msgs[:600].copy()
    probes[:, :3] = -1
    m = nb.GBNN(clusters=8, neurons=64).fit(msgs)
    x = rng.random((2000, 64), dtype=np.float32)
    index = nb.FlyHashIndex(code_bits=1024, winners=32)
    index.add(x)
    clf = nb.FlyNN(code_bits=1024, winners=32).fit(x, np.arange(2000) % 4)

    rules = ["joint", "sum-of-sum", "sum-of-max"] * 4
    serial = {r: nb.GBNN(clusters=8, neurons=64, rule=r).fit(msgs).predict(probes) for r in set(rules)}
    assert not (serial["joint"] == serial["sum-of-sum"]).all(), "the rules must differ for the test to mean something"
    serial_search = index.search(x[:500], k=5)
    serial_pred = clf.predict(x)

    def work(rule):
        symbols = _sharing(m, rule=rule).predict(probes)
        d, ids = index.search(x[:500], k=5)
        return rule, symbols, d, ids, clf.predict(x)

    with ThreadPoolExecutor(max_workers=6) as pool:
        for rule, symbols, d, ids, pred in pool.map(work, rules):
            assert (symbols == serial[rule]).all(), rule
            assert (d == serial_search[0]).all() and (ids == serial_search[1]).all()
            assert (pred == serial_pred).all()

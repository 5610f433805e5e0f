"""The approximate FlyHash index from Python: the knob, exactness at its maximum, add in pieces,
save/load and pickling, refused knob values, and the command line's index read back."""

import pickle

import numpy as np
import pytest

import neurobits as nb

RNG = np.random.default_rng(5)
CENTRES = RNG.random((20, 32), dtype=np.float32) * 200
X = (CENTRES[RNG.integers(0, 20, 1500)] + RNG.normal(scale=60, size=(1500, 32))).astype(np.float32)
Q = (CENTRES[RNG.integers(0, 20, 100)] + RNG.normal(scale=60, size=(100, 32))).astype(np.float32)
ARGS = dict(code_bits=512, winners=32, ones_per_row=4, tables=4, key_bits=8, pool=4)


def truth(k=10):
    d = ((Q[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.argsort(d, axis=1, kind="stable")[:, :k]


def recall(ids, t):
    return np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(ids, t)])


def test_recall_rises_with_probes_and_is_exact_at_the_maximum():
    index = nb.FlyHashApproxIndex(**ARGS, rerank="euclidean")
    assert index.add(X) == range(0, 1500)
    t = truth()
    r = [recall(index.search(Q, k=10, probes=p)[1], t) for p in (1, 4, 16, 256)]
    assert all(a <= b + 0.01 for a, b in zip(r, r[1:])), r
    assert r[0] < 0.9 and r[-1] == 1.0, r
    d, ids = index.search(Q, k=10, probes=256)
    assert d.dtype == np.float32 and ids.dtype == np.int64 and ids.shape == (100, 10)
    assert np.allclose(d, ((Q[:, None, :] - X[ids]) ** 2).sum(-1), rtol=1e-4)


def test_hamming_rerank_at_the_maximum_equals_the_exact_index():
    approx = nb.FlyHashApproxIndex(**ARGS)
    approx.add(X)
    exact = nb.FlyHashIndex(code_bits=512, winners=32, ones_per_row=4)
    exact.add(X)
    da, ia = approx.search(Q, k=5, probes=256)
    de, ie = exact.search(Q, k=5)
    assert np.array_equal(ia, ie) and np.array_equal(da, de.astype(np.float32))


def test_add_in_pieces_after_train_equals_one_add():
    whole = nb.FlyHashApproxIndex(**ARGS, rerank="euclidean")
    whole.add(X)
    pieces = nb.FlyHashApproxIndex(**ARGS, rerank="euclidean")
    pieces.train(X)
    pieces.add(X[:900])
    assert pieces.add(X[900:]) == range(900, 1500)
    for p in (2, 8):
        assert all(np.array_equal(a, b) for a, b in zip(whole.search(Q, 10, p), pieces.search(Q, 10, p)))


def test_save_load_and_pickle(tmp_path):
    index = nb.FlyHashApproxIndex(**ARGS, probes=8, rerank="euclidean")
    index.add(X)
    index.save(tmp_path / "a.nbm")
    for back in (nb.FlyHashApproxIndex.load(tmp_path / "a.nbm"), pickle.loads(pickle.dumps(index))):
        assert back.probes == 8 and back.rerank == "euclidean" and back.ntotal == 1500
        assert all(np.array_equal(a, b) for a, b in zip(back.search(Q, 5), index.search(Q, 5)))


@pytest.mark.parametrize("probes", [0, 257])
def test_bad_probes_are_refused(probes):
    index = nb.FlyHashApproxIndex(**ARGS)
    index.add(X[:100])
    with pytest.raises(ValueError, match=f"probes.*{probes}"):
        index.search(Q, 3, probes=probes)
    with pytest.raises(TypeError):
        index.search(Q, 3, probes=1.5)


def test_the_command_line_index_loads(tmp_path, cli):
    np.savetxt(tmp_path / "x.csv", X, delimiter=",")
    cli("flyhash", "index", "build", "-i", tmp_path / "x.csv", "-o", tmp_path / "cli.nbm", "--code-bits", "512",
        "--winners", "32", "--ones-per-row", "4", "--approx", "--tables", "4", "--key-bits", "8", "--pool", "4")
    loaded = nb.FlyHashApproxIndex.load(tmp_path / "cli.nbm")
    mine = nb.FlyHashApproxIndex(**ARGS)
    mine.add(np.loadtxt(tmp_path / "x.csv", delimiter=",", dtype=np.float32))
    assert all(np.array_equal(a, b) for a, b in zip(loaded.search(Q, 5, 4), mine.search(Q, 5, 4)))

"""Round trips through save/load, pickle, deepcopy and scikit-learn's clone; parameters."""

import copy
import pickle
from pathlib import Path

import numpy as np
import pytest

import neurobits as nb

RNG = np.random.default_rng(11)
X = RNG.random((120, 24), dtype=np.float32)
Y = RNG.integers(0, 4, size=120)
BLOBS = np.concatenate([c + RNG.normal(scale=0.3, size=(20, 2)) for c in ([0, 0], [5, 0], [0, 5])])
MESSAGES = RNG.integers(0, 32, size=(40, 6))
PROBES = np.where(RNG.random((40, 6)) < 0.4, -1, MESSAGES)
IMAGES = (RNG.random((20, 16)) * 17).astype(np.int64).astype(np.float32)
IMAGE_LABELS = np.repeat([0, 1], 10)


def fitted():
    """Each fitted estimator with a function of what it computes."""
    return [
        (nb.GBNN(clusters=6, neurons=32).fit(MESSAGES), lambda m: m.retrieve(PROBES)),
        (nb.FlyHash(code_bits=256, winners=12).fit(X), lambda m: m.transform(X)),
        (nb.FlyNN(code_bits=512, winners=16).fit(X, Y), lambda m: (m.predict(X), m.predict_proba(X))),
        (nb.FlyNN(code_bits=512, winners=16).fit(X, np.array(list("abcd"))[Y]), lambda m: m.predict(X)),
        (nb.OCNN(iters=200).fit(BLOBS), lambda m: m.labels_),
        (nb.Cortical(levels=2, minicolumns=8, epochs=3, upsample=1).fit(IMAGES, IMAGE_LABELS), lambda m: (m.predict(IMAGES), m.transform(IMAGES))),
    ]


def same(a, b):
    if isinstance(a, tuple):
        return all(same(x, y) for x, y in zip(a, b))
    return np.array_equal(a, b)


@pytest.mark.parametrize("i", range(6))
def test_pickle_deepcopy_and_save_load(i, tmp_path: Path):
    est, out = fitted()[i]
    want = out(est)
    for back in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
        assert type(back) is type(est)
        assert back.get_params() == est.get_params()
        assert same(out(back), want)
    if isinstance(est, nb.FlyNN) and est.classes_.dtype.kind == "U":
        # Non-integer labels are numbered in Python: the file holds the numbers, pickles the labels.
        return
    est.save(tmp_path / "m.nbm")
    back = type(est).load(tmp_path / "m.nbm")
    assert same(out(back), want)
    params = {k: v for k, v in est.get_params().items() if k not in ("device", "output")}
    assert {k: back.get_params()[k] for k in params} == params


def test_pickle_unfitted_and_clone():
    sklearn = pytest.importorskip("sklearn")
    for est in (nb.GBNN(neurons=16), nb.FlyHash(code_bits=128), nb.FlyNN(decay=0.5), nb.OCNN(iters=10), nb.Cortical(levels=2)):
        back = pickle.loads(pickle.dumps(est))
        assert back.get_params() == est.get_params() and not back.__sklearn_is_fitted__()
        c = sklearn.base.clone(est)
        assert c.get_params() == est.get_params() and c is not est


def test_index_pickle_and_empty():
    index = nb.FlyHashIndex(code_bits=256, winners=16)
    assert len(index) == 0 and index.d is None
    with pytest.raises(nb.NotFittedError):
        index.search(X, 3)
    index.add(X)
    back = pickle.loads(pickle.dumps(index))
    assert back.ntotal == 120 and back.d == 24
    assert all(np.array_equal(a, b) for a, b in zip(back.search(X[:9], 4), index.search(X[:9], 4)))
    # Fewer codes than k: padded as faiss pads.
    small = nb.FlyHashIndex(code_bits=256, winners=16)
    small.add(X[:2])
    d, ids = small.search(X[:1], k=4)
    assert list(ids[0, 2:]) == [-1, -1] and list(d[0, 2:]) == [2**32 - 1] * 2


def test_set_params_then_refit_uses_new_config():
    h = nb.FlyHash(code_bits=128, winners=8).fit(X)
    assert h.transform(X).shape == (120, 2)
    h.set_params(code_bits=256)
    assert h.transform(X).shape == (120, 2)  # fitted state unchanged until fit
    assert h.fit(X).transform(X).shape == (120, 4)


def test_pipeline_and_grid_search():
    pytest.importorskip("sklearn")
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler

    x = np.abs(X) * 10
    pipe = make_pipeline(MinMaxScaler(), nb.FlyNN(code_bits=512))
    grid = GridSearchCV(pipe, {"flynn__winners": [8, 32], "flynn__decay": [0.9, 0.99]}, cv=3).fit(x, Y)
    assert set(grid.best_params_) == {"flynn__winners", "flynn__decay"}
    assert grid.predict(x).shape == (120,)
    feats = make_pipeline(nb.FlyHash(code_bits=256, winners=16, output="bool"), nb.FlyNN(code_bits=512))
    assert feats.fit(X, Y).predict(X).shape == (120,)


def test_gbnn_partial_fit_and_rules():
    a = nb.GBNN(clusters=6, neurons=32).fit(MESSAGES)
    b = nb.GBNN(clusters=6, neurons=32).partial_fit(MESSAGES[:10]).partial_fit(MESSAGES[10:])
    assert np.array_equal(a.weights_, b.weights_) and a.n_stored_ == b.n_stored_ == 40
    for rule in ("sum_of_sum", "sum-of-max", "bail-out-early", "joint"):
        s, y, it, conv = a.set_params(rule=rule).retrieve(PROBES, return_stats=True)
        assert s.dtype == np.uint64 and y.dtype == np.int64 and it.dtype == np.uint32 and conv.dtype == bool
        assert np.array_equal(y[(y >= 0)], MESSAGES[y >= 0]) or rule == "sum_of_sum"
    assert np.array_equal(a.predict(MESSAGES), MESSAGES)


def test_gbnn_save_writes_the_current_retrieval_options(tmp_path):
    msgs = np.random.default_rng(3).integers(0, 16, size=(50, 4))
    m = nb.GBNN(clusters=4, neurons=16, rule="joint").fit(msgs)
    m.set_params(rule="sum-of-sum", gamma=3, max_iter=7)
    m.save(tmp_path / "m.nbm")
    back = nb.GBNN.load(tmp_path / "m.nbm")
    assert (back.rule.replace("_", "-"), back.gamma, back.max_iter) == ("sum-of-sum", 3, 7)


def test_a_loaded_cortical_network_knows_its_classes_and_features(tmp_path):
    digits = np.loadtxt(Path(__file__).resolve().parents[2] / "data/digits/digits.csv.gz", delimiter=",")
    x, y = digits[:60, :64], digits[:60, 64].astype(int) % 3 + 5
    net = nb.Cortical(epochs=2).fit(x, y)
    net.save(tmp_path / "c.nbm")
    for back in (nb.Cortical.load(tmp_path / "c.nbm"), pickle.loads(pickle.dumps(net))):
        assert back.classes_.tolist() == [5, 6, 7] and back.n_features_in_ == 64
        assert (back.predict(x) == net.predict(x)).all()

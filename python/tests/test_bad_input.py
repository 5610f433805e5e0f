"""Bad input raises the right exception with the library's one line (the CLI's), and never
crashes the interpreter; non-contiguous and other-dtype arrays are converted, not refused."""

import pickle
from pathlib import Path

import numpy as np
import pytest

import neurobits as nb

RNG = np.random.default_rng(5)
X = RNG.random((30, 8), dtype=np.float32)
Y = np.arange(30) % 3


def models():
    return [
        nb.FlyHash(code_bits=128, winners=8).fit(X),
        nb.FlyNN(code_bits=128, winners=8).fit(X, Y),
        nb.OCNN(iters=50, threshold=50).fit(X.astype(np.float64)),
    ]


@pytest.mark.parametrize("bad", ["strings", "complex", "objects", "1d", "3d", "empty", "no-columns", "sparse"])
def test_bad_arrays(bad):
    arrays = {
        "strings": (np.array([["a", "b"], ["c", "d"]]), TypeError, "not numeric"),
        "complex": (X.astype(np.complex64), ValueError, "Complex data not supported"),
        "objects": (np.array([[1.0, "x"], [2.0, 3.0]], dtype=object), TypeError, "argument must be"),
        "1d": (X[0], ValueError, "Reshape your data"),
        "3d": (X.reshape(30, 2, 4), ValueError, "expected a 2D array"),
        "empty": (X[:0], ValueError, r"0 sample\(s\)"),
        "no-columns": (X[:, :0], ValueError, r"0 feature\(s\)"),
    }
    if bad == "sparse":
        sparse = pytest.importorskip("scipy.sparse")
        a, exc, msg = sparse.csr_matrix(X), TypeError, "sparse input is not supported"
    else:
        a, exc, msg = arrays[bad]
    for est in (nb.FlyHash(), nb.FlyNN(), nb.OCNN()):
        with pytest.raises(exc, match=msg):
            est.fit(a, np.zeros(a.shape[0] if a.ndim else 0, int)) if isinstance(est, nb.FlyNN) else est.fit(a)
    for est in models()[:2]:
        with pytest.raises(exc, match=msg):
            est.predict(a) if isinstance(est, nb.FlyNN) else est.transform(a)


def test_same_messages_as_cli(cli, tmp_path: Path):
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "y.npy", Y)
    np.save(tmp_path / "x5.npy", X[:, :5])
    cli("flynn", "fit", "-i", tmp_path / "x.npy", "--labels", tmp_path / "y.npy", "-o", tmp_path / "m.nbm")
    clf = nb.FlyNN.load(tmp_path / "m.nbm")

    def cli_error(*args):
        r = cli(*args, check=False)
        assert r.returncode == 2
        return r.stderr.strip().removeprefix("error: ")

    # Wrong feature count: the same line.
    line = cli_error("flynn", "predict", "--model", tmp_path / "m.nbm", "-i", tmp_path / "x5.npy", "-o", tmp_path / "p.npy")
    with pytest.raises(ValueError) as e:
        clf.predict(X[:, :5])
    assert str(e.value) == line == "the vectors: 5 features per row, the model was fitted on 8"
    # A configuration out of range: the same line.
    line = cli_error("flynn", "fit", "-i", tmp_path / "x.npy", "--labels", tmp_path / "y.npy", "-o", tmp_path / "n.nbm",
                     "--code-bits", 64, "--winners", 100)
    with pytest.raises(ValueError) as e:
        nb.FlyNN(code_bits=64, winners=100).fit(X, Y)
    assert str(e.value) == line == "winners = 100: must be at most code_bits (64)"
    # NaN: the same line, with the array named where the CLI names its file.
    bad = X.copy()
    bad[2, 3] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    line = cli_error("flynn", "predict", "--model", tmp_path / "m.nbm", "-i", tmp_path / "nan.npy", "-o", tmp_path / "p.npy")
    with pytest.raises(ValueError) as e:
        clf.predict(bad)
    assert line == f"{tmp_path / 'nan.npy'}: row 3, column 4: NaN is not a finite number"
    assert str(e.value) == "the vectors: row 3, column 4: NaN is not a finite number"
    # A file that is no model, and one that does not exist.
    line = cli_error("flynn", "predict", "--model", tmp_path / "y.npy", "-i", tmp_path / "x.npy", "-o", tmp_path / "p.npy")
    with pytest.raises(ValueError) as e:
        nb.FlyNN.load(tmp_path / "y.npy")
    assert str(e.value) == line
    with pytest.raises(FileNotFoundError, match="No such file"):
        nb.FlyNN.load(tmp_path / "none.nbm")


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite(value):
    bad = X.copy()
    bad[4, 1] = value
    for est in models()[:2]:
        with pytest.raises(ValueError, match="row 5, column 2: .* is not a finite number"):
            est.predict(bad) if isinstance(est, nb.FlyNN) else est.transform(bad)
    with pytest.raises(ValueError, match="not a finite"):
        nb.FlyHash().fit(bad)
    with pytest.raises(ValueError, match="not a finite coordinate"):
        nb.OCNN().fit(bad)
    with pytest.raises(ValueError, match="is not an integer symbol"):
        nb.GBNN(clusters=8, neurons=16).fit(bad)


def test_non_contiguous_and_other_dtypes_are_converted():
    h, clf = models()[:2]
    want = h.transform(X)
    for a in (np.asfortranarray(X), X.astype(np.float64), np.repeat(X, 2, axis=1)[:, ::2], X.tolist()):
        assert np.array_equal(h.transform(a), want)
    ints = (X * 100).astype(np.int32)
    assert np.array_equal(h.transform(ints), h.transform(ints.astype(np.float32)))
    m = RNG.integers(0, 16, size=(10, 4))
    g = nb.GBNN(clusters=4, neurons=16)
    assert np.array_equal(g.fit(m.astype(np.int16)).weights_, g.fit(np.asfortranarray(m)).weights_)
    assert np.array_equal(g.fit(m.astype(np.float64)).weights_, g.fit(m).weights_)


def test_not_fitted():
    from neurobits import NotFittedError

    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)
    calls = [
        lambda: nb.FlyHash().transform(X),
        lambda: nb.FlyNN().predict(X),
        lambda: nb.FlyNN().predict_proba(X),
        lambda: nb.GBNN().retrieve(np.zeros((1, 8), int)),
        lambda: nb.Cortical().predict(X),
        lambda: nb.FlyHash().save("/tmp/never-written.nbm"),
        lambda: nb.OCNN().labels_,
    ]
    for call in calls:
        with pytest.raises((NotFittedError, AttributeError)):
            call()
    with pytest.raises(NotFittedError, match="not fitted yet"):
        nb._neurobits.FlyNN("{}").predict(X, "cpu")  # the library's own refusal, mapped


def test_bad_configs_and_devices():
    with pytest.raises(ValueError, match="code_bits = 0: must be at least 1"):
        nb.FlyHash(code_bits=0).fit(X)
    with pytest.raises(ValueError, match="decay = 2: must be in"):
        nb.FlyNN(decay=2.0).fit(X, Y)
    with pytest.raises(ValueError, match="rounds = 5000: must be at most 1000"):
        nb.FlyNN(rounds=5000).fit(X, Y)
    with pytest.raises(ValueError, match="unknown variant"):
        nb.GBNN(rule="majority").fit(np.zeros((1, 8), int))
    with pytest.raises(ValueError, match="iters = 0"):
        nb.OCNN(iters=0).fit(X)
    with pytest.raises(ValueError, match="unknown variant"):
        nb.OCNN(links="some").fit(X)
    with pytest.raises(ValueError, match="levels = 0"):
        nb.Cortical(levels=0).fit(X, Y)
    with pytest.raises(ValueError, match="lgn_threshold = -1: must be in 0..=127"):
        nb.Cortical(lgn_threshold=-1).fit(X, Y)
    with pytest.raises(ValueError, match="device 'tpu': expected cpu, gpu, cuda, gpu:N, cuda:N or auto"):
        nb.FlyHash(device="tpu").fit(X).transform(X)
    with pytest.raises(ValueError, match="is not a GPU index"):
        nb.FlyHash(device="cuda:x").fit(X).transform(X)
    with pytest.raises(TypeError, match="expected a string"):
        nb.FlyHash(device=0).fit(X).transform(X)
    if not nb.cuda_available():
        with pytest.raises(RuntimeError):
            nb.FlyHash(device="cuda").fit(X).transform(X)
        # auto falls back to the CPU, with the same bits.
        h = nb.FlyHash(device="auto").fit(X)
        assert np.array_equal(h.transform(X), h.set_params(device="cpu").transform(X))


@pytest.mark.filterwarnings("ignore:The number of unique classes")
def test_labels_and_symbols():
    with pytest.raises(ValueError, match="29 labels for 30 vectors"):
        nb.FlyNN().fit(X, Y[:-1])
    with pytest.raises(ValueError, match="Unknown label type"):
        nb.FlyNN().fit(X, RNG.random(30))
    with pytest.raises(ValueError, match="300 classes, at most 256"):
        nb.FlyNN(code_bits=64, winners=2).fit(np.repeat(X, 10, axis=0), np.arange(300))
    g = nb.GBNN(clusters=4, neurons=16).fit(RNG.integers(0, 16, size=(5, 4)))
    with pytest.raises(ValueError, match="the probes: cluster 2 of row 1 is 99, not in 0..16"):
        g.retrieve(np.array([[1, 99, -1, 2]]))
    with pytest.raises(ValueError, match="the messages: cluster 1 of row 1 is -1, not in 0..16"):
        g.partial_fit(np.array([[-1, 1, 2, 3]]))
    with pytest.raises(ValueError, match="not a whole number of 4-symbol probes"):
        g.retrieve(np.zeros((2, 3), int))


def test_huge():
    with pytest.raises(ValueError, match="code_bits = 8589934592: must fit 32 bits"):
        nb.FlyHash(code_bits=2**33).fit(X)
    with pytest.raises(ValueError):
        nb.GBNN(clusters=10**6, neurons=10**6).fit(np.zeros((1, 10**6), int))
    with pytest.raises(MemoryError, match="memory"):
        index = nb.FlyHashIndex(code_bits=128, winners=8)
        index.add(X)
        index.search(X, k=2**60)
    # A huge non-contiguous view is refused by numpy's allocation, not by a crash.
    view = np.broadcast_to(np.float32(1), (2**40, 8))
    with pytest.raises(MemoryError):
        nb.FlyHash(code_bits=128, winners=8).fit(X).transform(view)


def test_corrupted_pickle_and_file(tmp_path: Path):
    clf = models()[1]
    state = clf.__getstate__()
    data = bytearray(state["_model_bytes"])
    data[-40] ^= 1
    state["_model_bytes"] = bytes(data)
    with pytest.raises(ValueError, match="the pickled model: checksum mismatch"):
        pickle.loads(pickle.dumps(type(clf))).__new__(type(clf)).__setstate__(state)
    clf.save(tmp_path / "m.nbm")
    b = (tmp_path / "m.nbm").read_bytes()
    (tmp_path / "m.nbm").write_bytes(b[:-10])
    with pytest.raises(ValueError, match=str(tmp_path / "m.nbm")):
        nb.FlyNN.load(tmp_path / "m.nbm")
    (tmp_path / "h.nbm").write_bytes(b)
    with pytest.raises(ValueError, match="flynn"):
        nb.FlyHash.load(tmp_path / "h.nbm")

"""Bit for bit the same as the `neurobits` command line on the same inputs, for every model:
outputs, and the saved-model files themselves."""

from pathlib import Path

import numpy as np
import pytest

import neurobits as nb


@pytest.fixture(scope="module")
def small_fmnist(fmnist):
    x, y, xt, yt = fmnist
    # Every class in the first 600 training images; a slice of the test set.
    return x[:600], y[:600], xt[:200], yt[:200]


HASH = dict(code_bits=1024, ones_per_row=20, winners=32)


def test_flynn_fit_predict_equals_cli(cli, tmp_path: Path, small_fmnist):
    x, y, xt, yt = small_fmnist
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    np.save(tmp_path / "xt.npy", xt)
    # The library's defaults on both sides, error-driven rounds included.
    cli("flynn", "fit", "-i", tmp_path / "x.npy", "--labels", tmp_path / "y.npy", "-o", tmp_path / "cli.nbm",
        "--code-bits", 1024, "--ones-per-row", 20, "--winners", 32)
    cli("flynn", "predict", "--model", tmp_path / "cli.nbm", "-i", tmp_path / "xt.npy", "-o", tmp_path / "pred.npy")
    clf = nb.FlyNN(**HASH).fit(x, y)
    assert np.array_equal(clf.predict(xt), np.load(tmp_path / "pred.npy"))
    # The saved model is the CLI's, byte for byte; each reads the other's.
    clf.save(tmp_path / "py.nbm")
    assert (tmp_path / "py.nbm").read_bytes() == (tmp_path / "cli.nbm").read_bytes()
    assert np.array_equal(nb.FlyNN.load(tmp_path / "cli.nbm").predict(xt), clf.predict(xt))
    cli("flynn", "predict", "--model", tmp_path / "py.nbm", "-i", tmp_path / "xt.npy", "-o", tmp_path / "pred2.npy")
    assert np.array_equal(np.load(tmp_path / "pred2.npy"), clf.predict(xt))


def test_flynn_partial_fit_equals_fit(small_fmnist):
    x, y, xt, _ = small_fmnist
    # Without centring (the default centres on the first batch's mean) and without the
    # error-driven rounds of `fit` (partial_fit only counts), learning only counts.
    one = nb.FlyNN(**HASH, centre=False, rounds=0).fit(x, y)
    parts = nb.FlyNN(**HASH, centre=False, rounds=0)
    for a in range(0, len(x), 150):
        parts.partial_fit(x[a : a + 150], y[a : a + 150])
    assert parts._model.to_bytes() == one._model.to_bytes()
    assert np.array_equal(parts.predict_proba(xt), one.predict_proba(xt))


def test_flyhash_transform_equals_cli(cli, tmp_path: Path, small_fmnist):
    x = small_fmnist[0][:300]
    np.save(tmp_path / "x.npy", x)
    cli("flyhash", "hash", "-i", tmp_path / "x.npy", "--code-bits", 1024, "--ones-per-row", 20, "--winners", 32,
        "-o", tmp_path / "codes.bin")
    codes = nb.FlyHash(**HASH).fit(x).transform(x)
    raw = (tmp_path / "codes.bin").read_bytes()
    # NBFLYHSH, version u32, m u32, count u64, then the words little-endian.
    assert raw[:8] == b"NBFLYHSH" and int.from_bytes(raw[12:16], "little") == 1024
    assert raw[24:] == codes.astype("<u8").tobytes()
    # The boolean form is the same bits.
    bits = nb.FlyHash(**HASH, output="bool").fit(x).transform(x)
    assert bits.shape == (300, 1024) and np.array_equal(bits.sum(axis=1), np.full(300, 32))
    assert np.array_equal(nb.unpack(codes, 1024), bits)


def test_index_search_equals_cli(cli, tmp_path: Path, small_fmnist):
    x, _, xt, _ = small_fmnist
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "q.npy", xt[:50])
    cli("flyhash", "index", "build", "-i", tmp_path / "x.npy", "-o", tmp_path / "cli.nbi",
        "--code-bits", 1024, "--ones-per-row", 20, "--winners", 32)
    cli("flyhash", "index", "search", "--index", tmp_path / "cli.nbi", "-i", tmp_path / "q.npy", "-k", 7,
        "-o", tmp_path / "hits.csv")
    index = nb.FlyHashIndex(**HASH)
    assert index.add(x) == range(0, 600)
    dist, ids = index.search(xt[:50], k=7)
    hits = np.loadtxt(tmp_path / "hits.csv", delimiter=",", skiprows=1, dtype=np.int64)
    assert np.array_equal(hits[:, 2].reshape(50, 7), ids)
    assert np.array_equal(hits[:, 3].reshape(50, 7), dist)
    index.save(tmp_path / "py.nbi")
    assert (tmp_path / "py.nbi").read_bytes() == (tmp_path / "cli.nbi").read_bytes()
    # An append through the file equals an add in memory.
    assert nb.FlyHashIndex.append(tmp_path / "py.nbi", xt[:20]) == range(600, 620)
    index.add(xt[:20])
    loaded = nb.FlyHashIndex.load(tmp_path / "py.nbi")
    assert np.array_equal(loaded.codes, index.codes)
    assert all(np.array_equal(a, b) for a, b in zip(loaded.search(xt[:5], 3), index.search(xt[:5], 3)))


def test_ocnn_equals_cli(cli, tmp_path: Path, lsun):
    path, points = lsun
    cli("ocnn", "cluster", "-i", path, "--skip-rows", 3, "--iters", 300, "-o", tmp_path / "labels.txt",
        "--model", tmp_path / "cli.nbm")
    est = nb.OCNN(iters=300).fit(points)
    assert np.array_equal(est.labels_, np.loadtxt(tmp_path / "labels.txt", dtype=np.int64))
    # The same run: digests of the hit matrix and the final state agree too.
    cli_model = nb.OCNN.load(tmp_path / "cli.nbm")
    for k in ("hits_sha256", "state_sha256", "a", "threshold_percent", "k", "curve"):
        assert cli_model.report_[k] == est.report_[k], k
    assert np.array_equal(cli_model.labels_, est.labels_)


def test_ocnn_links_all_equals_cli(cli, tmp_path: Path, lsun):
    # The link rule before the mutual neighbours, through both front ends.
    path, points = lsun
    cli("ocnn", "cluster", "-i", path, "--skip-rows", 3, "--iters", 300, "--links", "all", "-o", tmp_path / "l.txt")
    est = nb.OCNN(iters=300, links="all").fit(points)
    assert est.get_params()["links"] == "all"
    assert np.array_equal(est.labels_, np.loadtxt(tmp_path / "l.txt", dtype=np.int64))


def test_ocnn_npy_input_equals_cli(cli, tmp_path: Path):
    rng = np.random.default_rng(7)
    centres = np.array([[0, 0, 0], [4, 0, 1], [0, 5, 2]], dtype=np.float64)
    x = np.concatenate([c + rng.normal(scale=0.4, size=(30, 3)) for c in centres])
    np.save(tmp_path / "x.npy", x)
    cli("ocnn", "cluster", "-i", tmp_path / "x.npy", "--iters", 300, "--dtype", "f64", "-o", tmp_path / "l.txt")
    labels = nb.OCNN(iters=300, dtype="f64").fit_predict(x)
    assert np.array_equal(labels, np.loadtxt(tmp_path / "l.txt", dtype=np.int64))


def test_cortical_equals_cli(cli, tmp_path: Path, digits):
    x, y = digits
    train = np.concatenate([np.flatnonzero(y == c)[:5] for c in range(10)])
    test = np.concatenate([np.flatnonzero(y == c)[5:15] for c in range(10)])
    np.save(tmp_path / "x.npy", x[train])
    np.save(tmp_path / "y.npy", y[train])
    np.save(tmp_path / "xt.npy", x[test])
    np.save(tmp_path / "yt.npy", y[test])
    cli("cortical", "fit", "-i", tmp_path / "x.npy", "--labels", tmp_path / "y.npy", "--epochs", 10,
        "-o", tmp_path / "cli.nbm")
    cli("cortical", "predict", "--model", tmp_path / "cli.nbm", "-i", tmp_path / "xt.npy", "--labels",
        tmp_path / "yt.npy", "-o", tmp_path / "pred.npy")
    net = nb.Cortical(epochs=10).fit(x[train], y[train])
    assert np.array_equal(net.predict(x[test]), np.load(tmp_path / "pred.npy"))
    net.save(tmp_path / "py.nbm")
    assert (tmp_path / "py.nbm").read_bytes() == (tmp_path / "cli.nbm").read_bytes()
    assert np.array_equal(nb.Cortical.load(tmp_path / "cli.nbm").transform(x[test]), net.transform(x[test]))
    # Another LGN threshold: the same on both sides, kept in the file, and not the default's.
    cli("cortical", "fit", "-i", tmp_path / "x.npy", "--labels", tmp_path / "y.npy", "--epochs", 10,
        "--lgn-threshold", 6, "-o", tmp_path / "cli6.nbm")
    net6 = nb.Cortical(epochs=10, lgn_threshold=6).fit(x[train], y[train])
    net6.save(tmp_path / "py6.nbm")
    assert (tmp_path / "py6.nbm").read_bytes() == (tmp_path / "cli6.nbm").read_bytes()
    back = nb.Cortical.load(tmp_path / "cli6.nbm")
    assert back.get_params()["lgn_threshold"] == 6
    assert np.array_equal(back.transform(x[test]), net6.transform(x[test]))
    assert not np.array_equal(net6.transform(x[test]), net.transform(x[test]))


def _csv_rows(m):
    return "".join(",".join(str(v) for v in row) + "\n" for row in m)


@pytest.mark.parametrize("rule", ["sum-of-sum", "sum-of-max", "bail-out-early", "joint"])
def test_gbnn_equals_cli(cli, tmp_path: Path, rule):
    c, l = 8, 64
    rng = np.random.default_rng(3)
    messages = rng.integers(0, l, size=(300, c))
    probes = messages[:200].copy()
    for row in probes:
        row[rng.choice(c, size=4, replace=False)] = -1
    (tmp_path / "m.csv").write_text(_csv_rows(messages))
    (tmp_path / "p.csv").write_text(_csv_rows(probes).replace("-1", "?"))
    cli("gbnn", "store", "--clusters", c, "--neurons", l, "--messages", tmp_path / "m.csv", "-o", tmp_path / "net.nb")
    cli("gbnn", "retrieve", "--net", tmp_path / "net.nb", "--probes", tmp_path / "p.csv", "--rule", rule,
        "-o", tmp_path / "out.csv")
    mem = nb.GBNN(clusters=c, neurons=l, rule=rule).fit(messages)
    states, symbols = mem.retrieve(probes)
    # The CLI's CSV: per cluster, the active neurons joined by '|'.
    words = states.reshape(len(probes), c, -1)
    lines = []
    for p in words:
        fields = []
        for w in p:
            bits = np.unpackbits(w.astype("<u8").view(np.uint8), bitorder="little")[:l]
            fields.append("|".join(str(i) for i in np.flatnonzero(bits)))
        lines.append(",".join(fields) + "\n")
    assert "".join(lines) == (tmp_path / "out.csv").read_text()
    # A `gbnn store` network file loads as a model, with the same weights and retrievals.
    loaded = nb.GBNN.load(tmp_path / "net.nb").set_params(rule=rule)
    assert np.array_equal(loaded.weights_, mem.weights_)
    assert np.array_equal(loaded.retrieve(probes)[0], states)
    unique = np.array([[len(f.split("|")) == 1 and f != "" for f in ln.strip().split(",")] for ln in lines])
    assert np.array_equal(symbols >= 0, unique)

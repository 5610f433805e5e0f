"""Shared fixtures: the `neurobits` binary, small slices of the project's data sets."""

from __future__ import annotations

import gzip
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
FMNIST = Path("/usr/share/datasets/fashion-mnist")


def cli_path() -> Path:
    """The CLI to compare with: $NEUROBITS_BIN, else target/debug/neurobits (built if absent)."""
    env = os.environ.get("NEUROBITS_BIN")
    if env:
        return Path(env)
    p = ROOT / "target" / "debug" / "neurobits"
    if not p.exists():
        subprocess.run(["cargo", "build", "-q", "--bin", "neurobits"], cwd=ROOT, check=True)
    return p


@pytest.fixture(scope="session")
def cli():
    """Runs the CLI; returns its completed process (check=True unless told)."""
    exe = cli_path()

    def run(*args, check=True):
        r = subprocess.run([str(exe), "-q", *map(str, args)], capture_output=True, text=True)
        if check and r.returncode != 0:
            raise AssertionError(f"neurobits {' '.join(map(str, args))} failed: {r.stderr}")
        return r

    return run


def idx(path: Path) -> np.ndarray:
    """An IDX file (gzip) as a numpy array."""
    with gzip.open(path, "rb") as f:
        b = f.read()
    ndim = b[3]
    dims = [int.from_bytes(b[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


@pytest.fixture(scope="session")
def fmnist():
    """(train X, train y, test X, test y) of Fashion-MNIST as float32 rows and int64 labels."""
    if not FMNIST.is_dir():
        pytest.fail(f"{FMNIST} is missing: run make setup")
    x = idx(FMNIST / "train-images-idx3-ubyte.gz").reshape(60000, 784).astype(np.float32)
    y = idx(FMNIST / "train-labels-idx1-ubyte.gz").astype(np.int64)
    xt = idx(FMNIST / "t10k-images-idx3-ubyte.gz").reshape(10000, 784).astype(np.float32)
    yt = idx(FMNIST / "t10k-labels-idx1-ubyte.gz").astype(np.int64)
    return x, y, xt, yt


@pytest.fixture(scope="session")
def digits():
    """scikit-learn's 8x8 digits from data/digits (pixels 0..16 as float32, labels int64)."""
    p = ROOT / "data" / "digits" / "digits.csv.gz"
    if not p.exists():
        pytest.fail(f"{p} is missing: run make setup")
    a = np.loadtxt(p, delimiter=",")
    return a[:, :64].astype(np.float32), a[:, 64].astype(np.int64)


@pytest.fixture(scope="session")
def lsun():
    """FCPS Lsun (400 points in 2-D; its file starts with 3 rows of debris)."""
    p = ROOT / "data" / "fcps" / "Lsun.data"
    if not p.exists():
        pytest.fail(f"{p} is missing: run make setup")
    return p, np.loadtxt(p, skiprows=3)

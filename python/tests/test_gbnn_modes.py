"""GBNN noisy and sparse probes through the Python API (issue 36)."""

import numpy as np
import pytest

import neurobits


def test_noisy_probe_corrects_a_wrong_symbol():
    for rule in ("sum-of-sum", "sum-of-max"):
        m = neurobits.GBNN(clusters=4, neurons=4, rule=rule, gamma=1)
        m.fit(np.array([[1, 2, 0, 3]]))
        _, symbols = m.retrieve(np.array([[0, 2, 0, 3]]), mode="noisy")
        assert symbols.tolist() == [[1, 2, 0, 3]], rule
        # The erasure reading trusts the wrong symbol: sum-of-max empties every cluster.
    _, symbols = m.retrieve(np.array([[0, 2, 0, 3]]))
    assert symbols.tolist() == [[-1, -1, -1, -1]]


def test_sparse_messages_store_and_retrieve_with_silent_clusters():
    m = neurobits.GBNN(clusters=5, neurons=4, rule="sum-of-sum", gamma=1)
    m.fit(np.array([[1, 2, 0, -2, -2], [3, -2, 1, 1, -2]]))
    _, symbols = m.retrieve(np.array([[1, -1, 0, -2, -2]]), mode="sparse")
    assert symbols.tolist() == [[1, 2, 0, -1, -1]]


def test_bad_mode_and_undefined_rule_are_value_errors():
    m = neurobits.GBNN(clusters=3, neurons=3, rule="joint")
    m.fit(np.array([[0, 1, 2]]))
    with pytest.raises(ValueError, match="mode"):
        m.retrieve(np.array([[0, 1, 2]]), mode="dense")
    with pytest.raises(ValueError, match="noisy"):
        m.retrieve(np.array([[0, 1, 2]]), mode="noisy")
    with pytest.raises(ValueError):
        m.retrieve(np.array([[0, -2, 2]]))

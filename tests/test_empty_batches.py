"""A batch of 0 samples gives an empty output of the right shape, as in Keras, for every layer."""

import numpy as np
import pytest
from layer_cases import CASES, call, exported_layers, sample


def _shapes(outputs):
    return [o.shape for o in outputs] if isinstance(outputs, (list, tuple)) else outputs.shape


def test_every_exported_layer_has_a_case():
    missing = sorted(set(exported_layers()) - set(CASES))
    assert not missing, f"add these layers to tests/layer_cases.py: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("training", [False, True])
def test_a_zero_sample_batch_gives_an_empty_output_of_the_right_shape(name, training):
    rng = np.random.default_rng(0)
    layer, data, style = sample(name, 3, rng)
    full = call(layer, data, style, training=training)  # built on real data first
    empty = [d[:0] for d in data]
    out = call(layer, empty, style, training=training)
    expected = _shapes(full)
    expected = [(0, *s[1:]) for s in expected] if isinstance(expected, list) else (0, *expected[1:])
    assert _shapes(out) == expected

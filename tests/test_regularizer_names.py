"""`regularizers.l1`, `l2` and `l1_l2`: the lowercase names Keras exports for the classes."""

import numpy as np
import pytest

from minikeras import layers, regularizers
from minikeras.regularizers import L1, L1L2, L2

WEIGHT = np.array([[1.0, -2.0], [0.5, 0.0]], "float32")  # sum |w| 3.5, sum w^2 5.25


def test_lowercase_names_are_the_classes():
    assert regularizers.l1 is L1 and regularizers.l2 is L2 and regularizers.l1_l2 is L1L2
    assert float(regularizers.l2(1e-4)(WEIGHT)) == pytest.approx(1e-4 * 5.25)
    assert float(regularizers.l1(0.1)(WEIGHT)) == pytest.approx(0.35)
    both = regularizers.l1_l2(l1=0.1, l2=0.2)
    assert float(both(WEIGHT)) == pytest.approx(0.1 * 3.5 + 0.2 * 5.25)
    assert regularizers.l2(0.5).get_config() == {"l2": 0.5}


def test_keras_style_layer_argument():
    layer = layers.Dense(2, kernel_regularizer=regularizers.l2(0.01))
    layer.build((None, 2))
    layer.kernel.assign(WEIGHT)
    assert float(sum(layer.losses)) == pytest.approx(0.01 * 5.25)
    restored = regularizers.deserialize(regularizers.serialize(regularizers.l1_l2(0.1, 0.2)))
    assert type(restored) is L1L2 and restored.get_config() == {"l1": 0.1, "l2": 0.2}

"""`utils.to_snake_case`: the one snake-case rule, Keras's, for default names and file paths."""

import os
import random

import pytest

from minikeras.utils import to_snake_case


@pytest.mark.parametrize(
    "name, expected",
    [
        ("MeanSquaredError", "mean_squared_error"),
        ("KLDivergence", "kl_divergence"),
        ("SpatialDropout2D", "spatial_dropout2d"),
        ("Conv2DTranspose", "conv2d_transpose"),
        ("LSTM", "lstm"),
        ("MaxPooling2D", "max_pooling2d"),
        ("HTTPServer2Go", "http_server2_go"),
        ("My-Layer v2", "my_layerv2"),  # (what cannot be in a name is dropped first)
    ],
)
def test_names_by_hand(name, expected):
    assert to_snake_case(name) == expected


def test_the_rule_is_the_installed_keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    naming = pytest.importorskip("keras.src.utils.naming")
    names = ["Dense", "BatchNormalization", "GRUCell", "ReLU", "PReLU", "Conv1DTranspose",
             "UnitNormalization", "TFSMLayer", "HashedCrossing", "a-b.C d"]  # fmt: skip
    rng = random.Random(0)
    alphabet = "AaBbZz09_- ."
    names += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10))) for _ in range(5000)]
    assert [to_snake_case(n) for n in names] == [naming.to_snake_case(n) for n in names]

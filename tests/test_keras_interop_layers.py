"""The newer layers cross to Keras 3 and back: `.keras` files either way predict the same.

The round trips run when `keras` is importable and skip otherwise; the layout
and config checks below them run everywhere.
"""

import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.saving.keras_layout import variable_groups

# name -> (input shape, the layer in minikeras, the same layer in Keras)
SINGLE = {
    "ReLU": ((6,), lambda lib: lib.ReLU(max_value=6.0, negative_slope=0.1, threshold=0.5)),
    "LeakyReLU": ((6,), lambda lib: lib.LeakyReLU(negative_slope=0.2)),
    "PReLU": ((4, 6), lambda lib: lib.PReLU(shared_axes=[1])),
    "ELU": ((6,), lambda lib: lib.ELU(alpha=0.7)),
    "Softmax": ((6,), lambda lib: lib.Softmax()),
    "Identity": ((6,), lambda lib: lib.Identity()),
    "ActivityRegularization": ((6,), lambda lib: lib.ActivityRegularization(l1=0.01)),
    "AlphaDropout": ((6,), lambda lib: lib.AlphaDropout(0.2)),
    "GaussianDropout": ((6,), lambda lib: lib.GaussianDropout(0.2)),
    "SpatialDropout1D": ((4, 6), lambda lib: lib.SpatialDropout1D(0.2)),
    "SpatialDropout2D": ((4, 4, 3), lambda lib: lib.SpatialDropout2D(0.2)),
    "EinsumDense": ((4, 6), lambda lib: lib.EinsumDense("abc,cd->abd", (None, 3), bias_axes="d")),
    "GroupNormalization": ((4, 6), lambda lib: lib.GroupNormalization(groups=2)),
    "UnitNormalization": ((6,), lambda lib: lib.UnitNormalization()),
    "TimeDistributed": ((4, 6), lambda lib: lib.TimeDistributed(lib.Dense(3))),
    "Rescaling": ((6,), lambda lib: lib.Rescaling(0.5, offset=1.0)),
    "Normalization": ((6,), lambda lib: lib.Normalization(mean=1.0, variance=4.0)),
    "Discretization": ((6,), lambda lib: lib.Discretization(bin_boundaries=[-1.0, 0.0, 1.0])),
    "CenterCrop": ((5, 5, 2), lambda lib: lib.CenterCrop(3, 3)),
    "Resizing": ((5, 5, 2), lambda lib: lib.Resizing(3, 4)),
    "RandomFlip": ((5, 5, 2), lambda lib: lib.RandomFlip(seed=1)),
}
PAIRS = {
    "Attention": lambda lib: lib.Attention(),
    "AdditiveAttention": lambda lib: lib.AdditiveAttention(),
    "GroupQueryAttention": lambda lib: lib.GroupQueryAttention(2, 4, 2),
}


def _model(api, name):
    """The same one-layer model in minikeras (`api` = mk) or Keras (`api` = keras)."""
    if name in PAIRS:
        query, value = api.Input((4, 6)), api.Input((5, 6))
        layer = PAIRS[name](api.layers)
        outputs = layer(query, value) if "Query" in name else layer([query, value])
        return api.Model([query, value], outputs)
    shape, make = SINGLE[name]
    inputs = api.Input(shape)
    return api.Model(inputs, make(api.layers)(inputs))


def _data(name):
    rng = np.random.default_rng(0)
    if name in PAIRS:
        return [rng.standard_normal((3, 4, 6)), rng.standard_normal((3, 5, 6))]
    return rng.standard_normal((3, *SINGLE[name][0]))


def _as_float32(data):
    return [x.astype("float32") for x in data] if isinstance(data, list) else data.astype("float32")


@pytest.mark.parametrize("name", sorted({**SINGLE, **PAIRS}))
def test_keras_loads_the_layer_from_minikeras_and_minikeras_from_keras(tmp_path, name):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    x = _as_float32(_data(name))

    ours = _model(mk, name)
    ours.save(tmp_path / "ours.keras")
    loaded = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(
        np.asarray(loaded.predict(x, verbose=0)), ours.predict(x, verbose=0), atol=1e-5
    )

    theirs = _model(keras, name)
    theirs.save(tmp_path / "theirs.keras")
    back = mk.models.load_model(tmp_path / "theirs.keras")
    np.testing.assert_allclose(
        back.predict(x, verbose=0), np.asarray(theirs.predict(x, verbose=0)), atol=1e-5
    )


def test_group_query_attention_weights_sit_where_keras_keeps_them():
    model = _model(mk, "GroupQueryAttention")
    paths = [path for path, variables in variable_groups(model) if variables]
    assert paths == [
        f"layers/grouped_query_attention/_{part}_dense/vars"
        for part in ("key", "output", "query", "value")
    ]
    assert model.layers[-1].name.startswith("grouped_query_attention")  # Keras's default name


@pytest.mark.parametrize("name", ["SpatialDropout1D", "SpatialDropout2D", "Discretization"])
def test_configs_of_layers_whose_keras_constructor_takes_no_trainable_leave_it_out(name):
    # Keras's SpatialDropout and Discretization constructors take only their own
    # arguments, name and dtype: a config with `trainable` would not load there.
    layer = SINGLE[name][1](layers)
    config = layer.get_config()
    assert "trainable" not in config
    assert ("data_format" in config) == (name == "SpatialDropout2D")
    rebuilt = type(layer).from_config(config)
    assert rebuilt.get_config() == config


def test_the_models_training_flag_wins_over_one_recorded_in_the_graph():
    # Keras 3 records `training=True` in a RandomFlip's node (its call's default) and
    # replays the graph with the model's own flag: predict is inference everywhere.
    inputs = mk.Input((10,))
    model = mk.Model(inputs, layers.Dropout(0.5, seed=0)(inputs, training=True))
    x = np.ones((4, 10), "float32")
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)
    dropped = model(x, training=True).numpy()
    assert set(np.unique(dropped)) == {0.0, 2.0}

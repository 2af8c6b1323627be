"""`data_format="channels_first"` on the depthwise, separable and transposed convolutions.

Each layer, given the same weights, computes what Keras 3 computes on the same
channels-first inputs (when `keras` is importable) and what the channels-last
layer computes on the transposed inputs, transposed back (always).
"""

import numpy as np
import pytest

from minikeras import layers

rng = np.random.default_rng(7)

# name -> (the layer made from a module of layers and a data_format, channels-last input shape)
CASES = {
    "DepthwiseConv1D": (lambda lib, f: lib.DepthwiseConv1D(3, depth_multiplier=2,
                                                           data_format=f), (2, 7, 3)),
    "DepthwiseConv2D": (lambda lib, f: lib.DepthwiseConv2D(3, strides=2, padding="same",
                                                           data_format=f), (2, 7, 6, 3)),
    "SeparableConv1D": (lambda lib, f: lib.SeparableConv1D(4, 3, padding="same",
                                                           data_format=f), (2, 6, 3)),
    "SeparableConv2D": (lambda lib, f: lib.SeparableConv2D(4, (3, 2), depth_multiplier=2,
                                                           activation="relu",
                                                           data_format=f), (1, 6, 5, 2)),
    "Conv1DTranspose": (lambda lib, f: lib.Conv1DTranspose(4, 3, strides=2,
                                                           data_format=f), (2, 5, 3)),
    "Conv2DTranspose": (lambda lib, f: lib.Conv2DTranspose(3, 3, strides=2, padding="same",
                                                           data_format=f), (2, 4, 5, 2)),
    "Conv3DTranspose": (lambda lib, f: lib.Conv3DTranspose(2, 2, strides=(1, 2, 2),
                                                           data_format=f), (1, 3, 3, 2, 2)),
}  # fmt: skip


def _first(x):
    return np.moveaxis(x, -1, 1)


def _random_weights(layer):
    return [rng.standard_normal(w.shape).astype("float32") for w in layer.get_weights()]


@pytest.mark.parametrize("name", sorted(CASES))
def test_channels_first_is_channels_last_transposed(name):
    make, shape = CASES[name]
    x = rng.standard_normal(shape).astype("float32")
    last, first = make(layers, "channels_last"), make(layers, "channels_first")
    last.build(x.shape)
    first.build(_first(x).shape)
    assert [w.shape for w in first.get_weights()] == [w.shape for w in last.get_weights()]
    weights = _random_weights(last)
    last.set_weights(weights)
    first.set_weights(weights)
    out = first(_first(x)).numpy()
    np.testing.assert_allclose(out, _first(last(x).numpy()), rtol=1e-5, atol=1e-5)
    assert first.compute_output_shape((None, *_first(x).shape[1:])) == (None, *out.shape[1:])
    config = first.get_config()
    assert config["data_format"] == "channels_first"
    assert type(first).from_config(config).data_format == "channels_first"


@pytest.mark.parametrize("name", sorted(CASES))
def test_channels_first_matches_keras(name):
    keras = pytest.importorskip("keras")
    make, shape = CASES[name]
    x = _first(rng.standard_normal(shape).astype("float32"))
    ours, theirs = make(layers, "channels_first"), make(keras.layers, "channels_first")
    ours.build(x.shape)
    theirs.build(x.shape)
    assert [tuple(w.shape) for w in theirs.get_weights()] == [w.shape for w in ours.get_weights()]
    weights = _random_weights(ours)
    ours.set_weights(weights)
    theirs.set_weights(weights)
    want = keras.ops.convert_to_numpy(theirs(x))
    np.testing.assert_allclose(ours(x).numpy(), want, rtol=1e-4, atol=1e-4)
    assert ours.compute_output_shape((None, *x.shape[1:])) == tuple(
        theirs.compute_output_shape((None, *x.shape[1:]))
    )

"""Comparing an application with Keras's (not collected by pytest): one copy for the families.

`compare_with_keras(function, arguments, images, tmp_path)` builds the model in
both frameworks, checks the layers (names without session counters, classes,
output shapes) and parameter counts, gives Keras's model random weights, copies
them here, and compares predictions twice:

- in inference, also after loading Keras's `.weights.h5` file by `weights=`;
- with `training=True`, where batch normalization uses the batch's statistics.
  Random weights make a deep network's inference output nearly independent of
  its input (the signal fades or saturates before the top), so inference alone
  would let a wrong layer in the body pass; the training-mode output depends on
  the input, which is asserted. The cases must then have no active dropout.
  The tolerance is looser there (1e-2 relative, 1e-3 absolute): statistics of a
  few values (a batch of 4 at 1x1 in the last blocks) amplify float32 rounding,
  which grows from 1e-6 to about 1e-3 through InceptionV3's 94 normalizations;
  a wrong layer differs by far more.
"""

import re

import numpy as np

import minikeras as mk

RNG = np.random.default_rng(5)


def layer_signature(model):
    """(name without its automatic counter, class name, output shape) of each layer."""
    return [
        (re.sub(r"_\d+$", "", layer.name), type(layer).__name__, tuple(layer.output.shape))
        for layer in model.layers
    ]


def randomize_normalization_and_biases(model):
    """Random batch normalization statistics and offsets, and biases; kernels as initialized."""
    for variable in model.weights:
        name = variable.path.rsplit("/", 1)[-1]
        if name in ("gamma", "moving_variance"):
            variable.assign(RNG.uniform(0.5, 1.5, variable.shape).astype("float32"))
        elif name in ("beta", "moving_mean", "bias"):
            variable.assign(RNG.normal(0, 0.1, variable.shape).astype("float32"))


def compare_with_keras(keras, function, arguments, images, tmp_path, atol=1e-6):
    """Asserts that `mk.applications.<function>(**arguments)` is Keras's, weights and all.

    Returns:
        Keras's model and ours.

    Args:
        keras: the imported `keras` module.
        function: the application's name (`"DenseNet121"`).
        arguments: its arguments (without `weights`).
        images: a preprocessed batch of at least 2 distinct images.
        tmp_path: a folder for the weights file.
        atol: the absolute tolerance (with `rtol=1e-4`).
    """
    theirs = getattr(keras.applications, function)(weights=None, **arguments)
    ours = getattr(mk.applications, function)(weights=None, **arguments)
    assert ours.name == theirs.name
    assert layer_signature(ours) == layer_signature(theirs)
    assert ours.count_params() == theirs.count_params()
    randomize_normalization_and_biases(theirs)
    ours.set_weights(theirs.get_weights())
    expected = theirs.predict(images, verbose=0)
    np.testing.assert_allclose(ours.predict(images, verbose=0), expected, rtol=1e-4, atol=atol)
    theirs.save_weights(tmp_path / "model.weights.h5")
    loaded = getattr(mk.applications, function)(
        weights=str(tmp_path / "model.weights.h5"), **arguments
    )
    np.testing.assert_allclose(loaded.predict(images, verbose=0), expected, rtol=1e-4, atol=atol)
    # Last: a training-mode call also moves the batch normalization statistics.
    expected = np.asarray(theirs(images, training=True))
    assert not np.allclose(expected[0], expected[1], rtol=1e-2)  # depends on the input
    got = mk.ops.convert_to_numpy(ours(images, training=True))
    np.testing.assert_allclose(got, expected, rtol=1e-2, atol=1e-3)
    return theirs, ours

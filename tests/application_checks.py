"""What the tests of the applications share (not collected by pytest).

A model's layers as Keras lists them (`layer_summary`), random weights for a
Keras model (`randomize`, `randomize_normalization_and_biases`), a weights
file in Keras's older order-matched layout, the layout of Keras's published
ImageNet files (`write_numbered_legacy_h5`), and one comparison with Keras
(`compare_with_keras`).

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


def layer_summary(model):
    """(name, class name, output shape) of each layer; automatic names lose their session
    counter (`layer_normalization_3` -> `layer_normalization`)."""
    return [
        (re.sub(r"_\d+$", "", layer.name), type(layer).__name__, tuple(layer.output.shape))
        for layer in model.layers
    ]


def randomize(model, rng):
    """Random values for every float weight of a Keras model, positive for a variance."""
    for variable in model.weights:
        if variable.dtype == "int32":
            continue  # Normalization's count
        values = rng.normal(0, 0.1, variable.shape)
        if "variance" in variable.path:
            values = rng.uniform(0.5, 1.5, variable.shape)
        variable.assign(values.astype("float32"))


def write_numbered_legacy_h5(model, path):
    """Writes `model`'s layers with weights to `path` in Keras's older layout, every weight of
    the k-th such layer filled with k (from 1), so a weight loaded in the wrong place shows.

    Returns:
        The number of layers written.
    """
    import h5py

    named = [layer for layer in model.layers if layer.weights]
    with h5py.File(path, "w") as handle:
        handle.attrs["layer_names"] = [layer.name.encode() for layer in named]
        for number, layer in enumerate(named, 1):
            group = handle.create_group(layer.name)
            ordered = layer.trainable_weights + layer.non_trainable_weights
            names = [f"{layer.name}/{i}:0" for i in range(len(ordered))]
            group.attrs["weight_names"] = [name.encode() for name in names]
            for name, weight in zip(names, ordered):
                group[name] = np.full(weight.shape, number, weight.dtype)
    return len(named)


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
    assert layer_summary(ours) == layer_summary(theirs)
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

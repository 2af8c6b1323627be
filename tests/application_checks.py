"""What the tests of the applications share: a model's layers as Keras lists them, random
weights for a Keras model, and a weights file in Keras's older order-matched layout (the
layout of Keras's published ImageNet files). Not collected by pytest.
"""

import re

import numpy as np


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

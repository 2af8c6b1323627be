"""Keras's older HDF5 weights files (`.h5` with `layer_names`), as Keras's own ImageNet weights are.

Keras 2 wrote, and Keras 3's `load_weights` still reads, weights matched by
order: the file lists the names of the layers that have weights, each group
lists its weights' names, and the k-th such layer of the file goes to the
k-th layer with weights of the model, its weights in the order trainable then
non-trainable. A full model saved as `.h5` keeps the same layout under
`model_weights`. minikeras's `load_weights` reads Keras 3's `.weights.h5`;
the applications read this older layout too, so the files Keras publishes for
them load.
"""

import os

import numpy as np

__all__ = ["is_legacy_h5", "load_legacy_h5"]


def _strings(values):
    return [value.decode("utf8") if isinstance(value, bytes) else str(value) for value in values]


def _weights_group(handle):
    return handle.get("model_weights", handle)


def is_legacy_h5(path):
    """Whether `path` is an HDF5 file in Keras's older order-matched layout.

    Args:
        path: a file path.

    Returns:
        True for an `.h5` / `.hdf5` file (not a Keras 3 `.weights.h5`) whose
        weights group lists `layer_names`.

    Example:
        >>> from minikeras.applications.legacy_weights import is_legacy_h5
        >>> is_legacy_h5("model.weights.h5"), is_legacy_h5("notes.txt")
        (False, False)
    """
    name = os.fspath(path)
    if name.endswith(".weights.h5") or not name.endswith((".h5", ".hdf5")):
        return False
    if not os.path.isfile(name):
        return False
    import h5py

    with h5py.File(name, "r") as handle:
        return "layer_names" in _weights_group(handle).attrs


def load_legacy_h5(model, path):
    """Loads an order-matched HDF5 weights file into `model`, checking everything first.

    Args:
        model: a built model.
        path: the file (see the module for its layout).

    Returns:
        None.

    Raises:
        ValueError: if the numbers of layers with weights, of weights in a
            layer, or a weight's shape differ; the model is then unchanged.

    Example:
        >>> import tempfile, pathlib, h5py
        >>> from minikeras.applications.legacy_weights import load_legacy_h5
        >>> x = mk.Input((2,)); model = mk.Model(x, mk.layers.Dense(1, name="d")(x))
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "old.h5"
        >>> with h5py.File(path, "w") as f:
        ...     f.attrs["layer_names"] = [b"d"]
        ...     g = f.create_group("d"); g.attrs["weight_names"] = [b"d/kernel:0", b"d/bias:0"]
        ...     g["d/kernel:0"] = np.array([[1.0], [2.0]]); g["d/bias:0"] = np.array([0.5])
        >>> load_legacy_h5(model, path)
        >>> model.predict(np.array([[1.0, 1.0]]), verbose=0)
        array([[3.5]], dtype=float32)
    """
    import h5py

    layers = [
        layer for layer in model.layers if layer.trainable_weights + layer.non_trainable_weights
    ]
    assignments = []
    with h5py.File(os.fspath(path), "r") as handle:
        group = _weights_group(handle)
        names = [
            name
            for name in _strings(group.attrs["layer_names"])
            if len(group[name].attrs.get("weight_names", [])) > 0
        ]
        if len(names) != len(layers):
            raise ValueError(
                f"Cannot load {os.fspath(path)!r} into '{model.name}': the file has weights for "
                f"{len(names)} layers, the model has {len(layers)} layers with weights"
            )
        for name, layer in zip(names, layers):
            variables = layer.trainable_weights + layer.non_trainable_weights
            values = [
                np.asarray(group[name][w]) for w in _strings(group[name].attrs["weight_names"])
            ]
            if len(values) != len(variables):
                raise ValueError(
                    f"Cannot load {os.fspath(path)!r}: layer '{layer.name}' has "
                    f"{len(variables)} weights, the file's '{name}' {len(values)}"
                )
            for variable, value in zip(variables, values):
                if tuple(variable.shape) != value.shape:
                    raise ValueError(
                        f"Cannot load {os.fspath(path)!r}: weight '{variable.path}' of layer "
                        f"'{layer.name}' has shape {tuple(variable.shape)}, the file's "
                        f"'{name}' gives {value.shape}"
                    )
                assignments.append((variable, value))
    for variable, value in assignments:
        variable.assign(value.astype(variable.dtype))

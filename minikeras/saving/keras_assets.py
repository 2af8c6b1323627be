"""Layers' assets in a `.keras` file: what `save_assets(dir)` writes, `load_assets(dir)` reads.

As in Keras 3, a layer that defines `save_assets(inner_path)` writes files into
a directory when its model is saved (a vocabulary, say); they are stored in
the zip under `assets/<the layer's path>/`, and a layer that defines
`load_assets(inner_path)` is handed a directory holding them again after
its model is loaded. The layer's path is the one its variables have in
`model.weights.h5` (`layers/dense`), as Keras writes it.
"""

import os
import posixpath
import tempfile

from minikeras.saving import keras_layout

__all__ = ["asset_members", "load_layer_assets"]


def _layers_with(model, hook):
    """`(path, layer)` for each layer of `model` whose class defines `hook`."""
    found = []
    for path, _, layer in keras_layout.layer_groups(model):
        if layer is not None and callable(getattr(layer, hook, None)):
            found.append((path[: -len("/vars")] if path.endswith("/vars") else path, layer))
    return found


def asset_members(model):
    """The zip members (name -> bytes) of the assets `model`'s layers write.

    Args:
        model: a built model.

    Returns:
        A dict; empty when no layer defines `save_assets`.

    Example:
        >>> mk.saving.keras_assets.asset_members(mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)]))
        {}
    """  # noqa: E501
    members = {}
    for path, layer in _layers_with(model, "save_assets"):
        with tempfile.TemporaryDirectory() as folder:
            layer.save_assets(folder)
            for root, _, names in os.walk(folder):
                for name in sorted(names):
                    relative = os.path.relpath(os.path.join(root, name), folder)
                    member = posixpath.join("assets", path, *relative.split(os.sep))
                    with open(os.path.join(root, name), "rb") as stream:
                        members[member] = stream.read()
    return members


def load_layer_assets(model, members):
    """Hands each layer that defines `load_assets` a directory with the assets saved for it.

    Args:
        model: the loaded model.
        members: the file's members, name -> bytes (those under `assets/` are read).

    Returns:
        None.

    Raises:
        ValueError: for an asset member whose name leaves its layer's directory.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> mk.saving.keras_assets.load_layer_assets(model, {})
    """
    for path, layer in _layers_with(model, "load_assets"):
        prefix = posixpath.join("assets", path) + "/"
        with tempfile.TemporaryDirectory() as folder:
            for name, data in members.items():
                if not name.startswith(prefix) or name.endswith("/"):
                    continue
                relative = posixpath.normpath(name[len(prefix) :])
                if relative.startswith("..") or posixpath.isabs(relative):
                    raise ValueError(f"the asset member {name!r} leaves its layer's directory")
                target = os.path.join(folder, *relative.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as stream:
                    stream.write(bytes(data))
            layer.load_assets(folder)

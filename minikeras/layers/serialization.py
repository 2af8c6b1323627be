"""`layers.serialize` / `layers.deserialize`: a layer as a Keras-shaped entry and back."""

from minikeras import serialization_lib

__all__ = ["deserialize", "serialize"]


def serialize(layer):
    """A layer as `{"module", "class_name", "config", "registered_name", "build_config"}`.

    Args:
        layer: a layer or model.

    Returns:
        A JSON-friendly dict (see `minikeras.serialization_lib`).

    Raises:
        ValueError: if the layer's config holds something that cannot be written.

    Example:
        >>> entry = mk.layers.serialize(mk.layers.Dense(4, name="d"))
        >>> entry["class_name"], entry["config"]["units"]
        ('Dense', 4)
    """
    return serialization_lib.serialize_keras_object(layer)


def deserialize(config, custom_objects=None):
    """Makes the layer (built, if its entry says how) that `serialize` described.

    Args:
        config: the entry.
        custom_objects: optional dict of name -> class or function.

    Returns:
        A new layer.

    Raises:
        ValueError: for an unknown class or a malformed entry.

    Example:
        >>> layer = mk.layers.deserialize(mk.layers.serialize(mk.layers.Dense(4, name="d")))
        >>> layer.units, layer.name
        (4, 'd')
    """
    from minikeras import layers

    objects = {name: getattr(layers, name) for name in layers.__all__}
    return serialization_lib.deserialize_keras_object(
        config, custom_objects=custom_objects, module_objects=objects
    )

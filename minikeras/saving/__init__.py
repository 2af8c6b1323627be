"""Saving: models and weights in one safe, documented file format (see docs/saving.md).

- `archive`: the format (a zip of JSON and numpy `.npz`), atomic writes and
  checked reads that never unpickle;
- `registry`: `register_serializable`, and layer configs in and out;
- `functional`: a functional model's config (layers and inbound nodes);
- `model_io`: `save_model`, `load_model`, `save_weights`, `load_weights`.
"""

from minikeras.saving.archive import LoadError
from minikeras.saving.model_io import load_model, load_weights, save_model, save_weights
from minikeras.saving.registry import (
    custom_object_scope,
    deserialize_layer,
    get_registered_name,
    get_registered_object,
    register_serializable,
    serialize_layer,
)

__all__ = [
    "LoadError",
    "custom_object_scope",
    "deserialize_layer",
    "get_registered_name",
    "get_registered_object",
    "load_model",
    "load_weights",
    "register_serializable",
    "save_model",
    "save_weights",
    "serialize_layer",
]

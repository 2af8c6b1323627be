"""Saving: models and weights in one safe, documented file format (see docs/saving.md).

- `archive`: the format (a zip of JSON and numpy `.npz`), atomic writes and
  checked reads that never unpickle;
- `registry`: `register_serializable`, and layer configs in and out;
- `functional`: a functional model's config (layers and inbound nodes);
- `weights`: `save_weights`, `load_weights`: weights keyed by tracked path;
- `model_io`: `save_model`, `load_model`, with the training state.
"""

from minikeras.saving.archive import LoadError
from minikeras.saving.model_io import load_model, save_model
from minikeras.saving.registry import (
    custom_object_scope,
    deserialize_layer,
    get_registered_name,
    get_registered_object,
    register_serializable,
    serialize_layer,
)
from minikeras.saving.weights import load_weights, save_weights

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

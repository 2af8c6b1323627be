"""Saving: models and weights in one safe, documented file format (see docs/saving.md).

- `archive`: the format (a zip of JSON and numpy `.npz`), atomic writes and
  checked reads that never unpickle;
- `minikeras.serialization_lib` (re-exported here, Keras's names): the one
  registry (`register_keras_serializable`, `get_custom_objects`,
  `custom_object_scope`) and `serialize_keras_object` /
  `deserialize_keras_object` for every family;
- `registry`: layer entries in and out, checked for saving;
- `functional`: a functional model's config (layers and inbound nodes);
- `sharing`: a layer that several models of a file hold, written with
  Keras's `shared_object_id` and built once on load;
- `weights`: `save_weights`, `load_weights`: weights keyed by tracked path;
- `model_io`: `save_model`, `load_model`, with the training state;
- `compile_config`: `Model.get_compile_config` / `compile_from_config`, in
  Keras 3's shape (what a `.keras` file keeps as `compile_config`);
- `keras_file` (and `keras_writer`, `keras_config`, `keras_layout`,
  `keras_optimizer_layout`, `keras_order`, `keras_ops`, `functions`): Keras
  3's `.keras` and `.weights.h5` files, read and written.
"""

from minikeras.saving.archive import LoadError
from minikeras.saving.model_io import load_model, save_model
from minikeras.saving.registry import deserialize_layer, register_serializable, serialize_layer
from minikeras.saving.weights import load_weights, save_weights
from minikeras.serialization_lib import (
    CustomObjectScope,
    custom_object_scope,
    deserialize_keras_object,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
    serialize_keras_object,
)

__all__ = [
    "CustomObjectScope",
    "LoadError",
    "custom_object_scope",
    "deserialize_keras_object",
    "get_custom_objects",
    "deserialize_layer",
    "get_registered_name",
    "get_registered_object",
    "load_model",
    "load_weights",
    "register_keras_serializable",
    "register_serializable",
    "save_model",
    "save_weights",
    "serialize_keras_object",
    "serialize_layer",
]

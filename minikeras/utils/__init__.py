"""Helpers for users, as `keras.utils` has them.

Seeding (`set_random_seed`), a fresh session (`clear_session`), naming
(`to_snake_case`), labels and arrays (`to_categorical`, `normalize`),
sequences (`pad_sequences`, `timeseries_dataset_from_array`), data
(`split_dataset`, `PyDataset` for data read batch by batch, and the batch
tuples of `pack_x_y_sample_weight` / `unpack_x_y_sample_weight`), folders of
files as datasets (`image_dataset_from_directory`,
`text_dataset_from_directory`, `audio_dataset_from_directory`), dtype names
(`standardize_dtype`), an attribute-style dict of settings (`Config`), a
progress bar for hand-written loops (`Progbar`) and the functional API's
graph (`is_keras_tensor`, `get_source_inputs`), and images between arrays,
PIL images and files (`array_to_img`, `img_to_array`, `save_img`, `load_img`,
through Pillow when it is installed). The interactive-logging
switches are `minikeras.config`'s, re-exported as Keras does.
The serialization names Keras also exports here (`register_keras_serializable`,
`serialize_keras_object`, `deserialize_keras_object`, `get_custom_objects`,
`get_registered_name`, `get_registered_object`, `custom_object_scope`,
`CustomObjectScope`) are `minikeras.saving`'s, re-exported.

`FeatureSpace`, `model_to_dot` and `plot_model` are bound here when
`minikeras` is imported (they are defined above `utils`, among the layers and
models). Drawing a model needs pydot (`pip install pydot`) and, for
`plot_model`, the Graphviz program; `model.summary()` prints the layer graph
as text without them.
"""

from minikeras.config import standardize_dtype
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
from minikeras.switches import (
    disable_interactive_logging,
    enable_interactive_logging,
    is_interactive_logging_enabled,
)
from minikeras.utils.audio_dataset import audio_dataset_from_directory
from minikeras.utils.config_object import Config
from minikeras.utils.data_tuples import pack_x_y_sample_weight, unpack_x_y_sample_weight
from minikeras.utils.dataset_split import split_dataset
from minikeras.utils.image_dataset import image_dataset_from_directory
from minikeras.utils.image_utils import array_to_img, img_to_array, load_img, save_img
from minikeras.utils.naming import to_snake_case
from minikeras.utils.numerical import normalize, to_categorical
from minikeras.utils.progbar import Progbar
from minikeras.utils.py_dataset import PyDataset
from minikeras.utils.seeding import set_random_seed
from minikeras.utils.sequence import pad_sequences
from minikeras.utils.session import clear_session
from minikeras.utils.symbolic import get_source_inputs, is_keras_tensor
from minikeras.utils.text_dataset import text_dataset_from_directory
from minikeras.utils.timeseries import timeseries_dataset_from_array

Sequence = PyDataset  # Keras 3 exports the same class under both names

__all__ = [
    "array_to_img",
    "img_to_array",
    "load_img",
    "save_img",
    "Config",
    "CustomObjectScope",
    "Progbar",
    "PyDataset",
    "Sequence",
    "array_to_img",
    "audio_dataset_from_directory",
    "clear_session",
    "custom_object_scope",
    "deserialize_keras_object",
    "disable_interactive_logging",
    "enable_interactive_logging",
    "get_custom_objects",
    "get_registered_name",
    "get_registered_object",
    "get_source_inputs",
    "image_dataset_from_directory",
    "img_to_array",
    "is_interactive_logging_enabled",
    "is_keras_tensor",
    "load_img",
    "normalize",
    "pack_x_y_sample_weight",
    "pad_sequences",
    "register_keras_serializable",
    "save_img",
    "serialize_keras_object",
    "set_random_seed",
    "split_dataset",
    "standardize_dtype",
    "text_dataset_from_directory",
    "timeseries_dataset_from_array",
    "to_categorical",
    "to_snake_case",
    "unpack_x_y_sample_weight",
]

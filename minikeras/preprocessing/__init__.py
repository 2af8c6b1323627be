"""`keras.preprocessing`'s names: data helpers that live in `minikeras.utils`.

Keras 3 keeps this namespace for code written against older Keras:
`keras.preprocessing.sequence.pad_sequences`,
`keras.preprocessing.timeseries_dataset_from_array`,
`keras.preprocessing.image_dataset_from_directory`,
`keras.preprocessing.text_dataset_from_directory` and the
`keras.preprocessing.image` functions (`load_img`, `img_to_array`, ...) are
the same functions as `keras.utils`'s (`image.smart_resize` is only there).
"""

from minikeras.preprocessing import image, sequence
from minikeras.utils.image_dataset import image_dataset_from_directory
from minikeras.utils.text_dataset import text_dataset_from_directory
from minikeras.utils.timeseries import timeseries_dataset_from_array

__all__ = [
    "image",
    "image_dataset_from_directory",
    "sequence",
    "text_dataset_from_directory",
    "timeseries_dataset_from_array",
]

"""`keras.preprocessing`'s names: data helpers that live in `minikeras.utils`.

Keras 3 keeps this namespace for code written against older Keras:
`keras.preprocessing.sequence.pad_sequences` and
`keras.preprocessing.timeseries_dataset_from_array` and
`keras.preprocessing.image.array_to_img` (and `img_to_array`, `save_img`,
`load_img`) are the same functions as `keras.utils`'s. Unlike Keras, there
is no `image.smart_resize` and no `image_dataset_from_directory` /
`text_dataset_from_directory` (minikeras reads no files into datasets).
"""

from minikeras.preprocessing import image, sequence
from minikeras.utils.timeseries import timeseries_dataset_from_array

__all__ = ["image", "sequence", "timeseries_dataset_from_array"]

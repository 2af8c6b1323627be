"""`keras.preprocessing.image`: the image helpers, the same functions as `minikeras.utils`'s.

`smart_resize` (a centred crop to the target's aspect ratio, then a resize)
is only here, as in Keras.
"""

from minikeras.utils.image_resizing import smart_resize
from minikeras.utils.image_utils import array_to_img, img_to_array, load_img, save_img

__all__ = ["array_to_img", "img_to_array", "load_img", "save_img", "smart_resize"]

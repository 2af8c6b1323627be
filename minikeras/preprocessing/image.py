"""`keras.preprocessing.image`: the image helpers, the same functions as `minikeras.utils`'s."""

from minikeras.utils.image_utils import array_to_img, img_to_array, load_img, save_img

__all__ = ["array_to_img", "img_to_array", "load_img", "save_img"]

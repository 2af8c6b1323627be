"""Keras's `keras.applications.resnet50` module: `ResNet50` and its preprocessing, from `resnet`."""

from minikeras.applications.resnet import ResNet50, decode_predictions, preprocess_input

__all__ = ["ResNet50", "decode_predictions", "preprocess_input"]

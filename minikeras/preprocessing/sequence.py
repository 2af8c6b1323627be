"""`keras.preprocessing.sequence`: `pad_sequences`, the same function as `minikeras.utils`'s."""

from minikeras.utils.sequence import pad_sequences

__all__ = ["pad_sequences"]

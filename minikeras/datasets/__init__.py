"""Data sets: the bundled 8x8 digits, and MNIST / Fashion-MNIST from local files."""

from minikeras.datasets import digits, fashion_mnist, mnist

__all__ = ["digits", "fashion_mnist", "mnist"]

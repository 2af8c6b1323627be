"""Models: `Model` (subclassed or functional) and `Sequential`."""

from minikeras.models.model import Model
from minikeras.models.sequential import Sequential

__all__ = ["Model", "Sequential"]

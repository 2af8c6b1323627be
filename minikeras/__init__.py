"""minikeras: a small, fast, honest deep-learning framework with the Keras API."""

from minikeras import config, ops
from minikeras.engine import GradientTape, Tensor, Variable

__version__ = "0.1.0"

__all__ = ["GradientTape", "Tensor", "Variable", "config", "ops"]

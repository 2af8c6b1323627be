"""The engine: `Tensor`, `Variable`, and `GradientTape` on autograd."""

from minikeras.engine.tape import GradientTape
from minikeras.engine.tensor import Tensor, Variable, read_variable

__all__ = ["GradientTape", "Tensor", "Variable", "read_variable"]

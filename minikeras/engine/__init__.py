"""The engine: `Tensor`, `Variable`, and `GradientTape` on autograd."""

from minikeras.engine.tape import GradientTape
from minikeras.engine.tensor import Tensor, read_variable
from minikeras.engine.variable import Variable

__all__ = ["GradientTape", "Tensor", "Variable", "read_variable"]

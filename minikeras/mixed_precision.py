"""Mixed precision, under Keras 3's `keras.mixed_precision` names.

`set_global_policy("mixed_float16")` makes later layers keep their weights
in float32 and compute in float16 (see `minikeras.dtype_policies`), and
`compile` then wraps the optimizer in a `LossScaleOptimizer`. The names
here are Keras's legacy ones: `set_global_policy` / `global_policy` are
`mk.config.set_dtype_policy` / `mk.config.dtype_policy`, and `Policy` is
`DTypePolicy`. `"mixed_bfloat16"` is refused: numpy has no bfloat16.
"""

from minikeras.dtype_policies import DTypePolicy
from minikeras.dtype_policies.policy import dtype_policy, set_dtype_policy
from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer

__all__ = [
    "DTypePolicy",
    "LossScaleOptimizer",
    "Policy",
    "dtype_policy",
    "global_policy",
    "set_dtype_policy",
    "set_global_policy",
]

Policy = DTypePolicy
global_policy = dtype_policy
set_global_policy = set_dtype_policy

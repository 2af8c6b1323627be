"""`Adafactor`: Adam-like steps with the second moments of matrices kept as two factors.

Written only as `update_step` (no fused fast path).
"""

import math

from minikeras import ops
from minikeras.optimizers._apply import label
from minikeras.optimizers._checks import ANY, NON_NEGATIVE, POSITIVE, check_number
from minikeras.optimizers.base import Optimizer

__all__ = ["Adafactor"]


def _rms(x):
    return ops.sqrt(ops.mean(ops.square(x)))


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern, 2018), Keras 3's variant, with its defaults.

    For a variable of two or more axes, the running mean of the squared
    gradients is kept as its means over the last axis (`r`) and over the one
    before (`c`), a factored estimate; a variable of fewer axes keeps it whole:

        t = iterations + 1
        rho = min(learning_rate, 1 / sqrt(t))
        alpha = max(epsilon_2, rms(w)) * rho
        beta = 1 - t ** beta_2_decay
        g2 = g^2 + epsilon_1
        r = beta * r + (1 - beta) * mean(g2, axis=-1)       # 2 axes or more
        c = beta * c + (1 - beta) * mean(g2, axis=-2)
        v = (r / mean(r, axis=-1))[..., None] * c[..., None, :]
        v = beta * v + (1 - beta) * g2                      # otherwise
        u = g / sqrt(v)
        w = w - alpha * u / max(1, rms(u) / clip_threshold)

    Args:
        learning_rate: a float, a schedule or a callable (see `Optimizer`); the
            step is never above `1 / sqrt(t)`.
        beta_2_decay: the decay's exponent (negative: `beta` grows to 1).
        epsilon_1: a number >= 0 added to the squared gradients.
        epsilon_2: a number >= 0, the least `rms(w)` a step is scaled by.
        clip_threshold: a number > 0, the largest `rms(u)` of a step.
        relative_step: Keras's flag: with a float learning rate, the rate is
            first capped at `1 / sqrt(t)`, which `rho` does anyway, so it
            changes nothing (as in Keras); kept in the config.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `name`, as
            for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([[3.0, 4.0]])
        >>> mk.optimizers.Adafactor(learning_rate=0.1).apply([np.array([[1.0, -1.0]])], [w])
        >>> w.numpy()  # alpha = rms(w) * 0.1, u = sign(g) (first step: v = g^2)
        array([[2.6464467, 4.3535533]], dtype=float32)
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta_2_decay=-0.8,
        epsilon_1=1e-30,
        epsilon_2=1e-3,
        clip_threshold=1.0,
        relative_step=True,
        **kwargs,
    ):
        super().__init__(learning_rate, **kwargs)
        self.beta_2_decay = check_number("Adafactor", "beta_2_decay", beta_2_decay, ANY)
        self.epsilon_1 = check_number("Adafactor", "epsilon_1", epsilon_1, NON_NEGATIVE)
        self.epsilon_2 = check_number("Adafactor", "epsilon_2", epsilon_2, NON_NEGATIVE)
        self.clip_threshold = check_number("Adafactor", "clip_threshold", clip_threshold, POSITIVE)
        self.relative_step = bool(relative_step)

    def build(self, variables):
        super().build(variables)
        # Per variable, in Keras's order: r, c, then the velocity. A variable of fewer
        # than two axes gets scalar placeholders for r and c, as in Keras, so that
        # saved optimizer states line up.
        self._r, self._c, self._v = [], [], []
        for variable in variables:
            shape = tuple(variable.shape)
            factored = len(shape) >= 2
            prefix = label(variable).replace("/", "_")
            row_shape = shape[:-1] if factored else ()
            column_shape = (*shape[:-2], shape[-1]) if factored else ()
            self._r.append(self.add_variable(row_shape, "zeros", variable.dtype, f"{prefix}_r"))
            self._c.append(self.add_variable(column_shape, "zeros", variable.dtype, f"{prefix}_c"))
            self._v.append(self.add_variable_from_reference(variable, "velocity"))

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        r, c, v = self._r[index], self._c[index], self._v[index]
        step = float(int(self.iterations.numpy()) + 1)
        rho = min(learning_rate, 1.0 / math.sqrt(step))
        beta = 1.0 - step**self.beta_2_decay
        alpha = ops.maximum(self.epsilon_2, _rms(variable)) * rho
        squared = ops.square(gradient) + self.epsilon_1
        if len(variable.shape) >= 2:
            self.assign(r, beta * r + (1.0 - beta) * ops.mean(squared, axis=-1))
            self.assign(c, beta * c + (1.0 - beta) * ops.mean(squared, axis=-2))
            row_share = r / ops.mean(r, axis=-1, keepdims=True)
            self.assign(v, ops.expand_dims(row_share, -1) * ops.expand_dims(c, -2))
        else:
            self.assign(v, beta * v + (1.0 - beta) * squared)
        u = gradient / ops.sqrt(v)
        u = u / ops.maximum(1.0, _rms(u) / self.clip_threshold)
        self.assign_sub(variable, alpha * u)

    def get_config(self):
        return {
            **super().get_config(),
            "beta_2_decay": self.beta_2_decay,
            "epsilon_1": self.epsilon_1,
            "epsilon_2": self.epsilon_2,
            "clip_threshold": self.clip_threshold,
            "relative_step": self.relative_step,
        }

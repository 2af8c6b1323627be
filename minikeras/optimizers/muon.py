"""`Muon`: momentum steps orthogonalized by Newton-Schulz for matrices, AdamW for the rest.

Written only as `update_step` (no fused fast path), the way a user writes an
optimizer.
"""

import re

from minikeras import ops
from minikeras.optimizers._checks import FRACTION, NON_NEGATIVE, POSITIVE, check_number
from minikeras.optimizers.base import Optimizer

__all__ = ["Muon"]


class Muon(Optimizer):
    """Muon (Jordan et al., 2024; Liu et al., 2025): orthogonalized momentum for 2-D weights.

    A 2-D weight (a `Dense` kernel) takes a Muon step; every other weight
    (biases, convolution kernels, and, as Keras chooses, embeddings and the
    variables whose path matches a pattern of `exclude_layers`) takes an
    AdamW step. Keras advises keeping the output layer out of Muon:
    `exclude_layers=["output_dense"]`. The Muon step, with `mu = momentum`:

        m = mu * m + g
        u = g + mu * m if nesterov else m
        u = u / (||u||_F + 1e-7)                 # (transposed while rows > columns)
        ns_steps times: A = u @ u.T; u = a * u + (b * A + c * A @ A) @ u
        w = w - learning_rate * u * sqrt(max(rows, columns)) * rms_rate   # without rms_rate if None

    with `(a, b, c) = (muon_a, muon_b, muon_c)`. The AdamW step, with
    `lr = learning_rate * adam_lr_ratio` and `t = iterations + 1`:

        m = m + (g - m) * (1 - adam_beta_1)
        v = v + (g^2 - v) * (1 - adam_beta_2)
        w = w - lr * sqrt(1 - adam_beta_2^t) / (1 - adam_beta_1^t) * m / (sqrt(v) + epsilon)

    Before either step the weight decays, `w = w - w * decay * learning_rate`,
    with `decay` = `weight_decay` for Muon weights and `adam_weight_decay`
    for AdamW ones (None: no decay for those), as Keras does.

    Args:
        learning_rate: a float, a schedule, or a callable (of no argument, or of the step).
        adam_beta_1: decay of the AdamW first moment, in [0, 1).
        adam_beta_2: decay of the AdamW second moment, in [0, 1).
        adam_weight_decay: None or a number >= 0: the AdamW weights' decay.
        epsilon: a number >= 0 that keeps the AdamW division finite.
        weight_decay: None or a number >= 0: the Muon weights' decay.
        exclude_layers: None or a list of regular expressions; a variable
            whose `path` matches one takes AdamW steps.
        exclude_embeddings: if True, variables with "embedding" in their
            path (any case) take AdamW steps.
        muon_a: the Newton-Schulz coefficient `a` (keep the default).
        muon_b: the Newton-Schulz coefficient `b` (keep the default).
        muon_c: the Newton-Schulz coefficient `c` (keep the default).
        adam_lr_ratio: a number >= 0: the AdamW steps' learning rate over `learning_rate`.
        momentum: the Muon momentum, in [0, 1).
        ns_steps: an int >= 0: Newton-Schulz iterations.
        nesterov: whether the Muon step uses Nesterov momentum.
        rms_rate: None or a number > 0: scales the Muon step by
            `sqrt(max(rows, columns)) * rms_rate` (Moonlight's rule, so that
            AdamW's learning rate and decay suit Muon too); None: no scaling.
        **kwargs: `clipnorm`, `clipvalue`, `global_clipnorm`, `use_ema`,
            `ema_momentum`, `ema_overwrite_frequency`, `name`, as for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable(np.eye(2))
        >>> muon = mk.optimizers.Muon(learning_rate=0.1, weight_decay=None, rms_rate=None)
        >>> muon.apply([np.diag([3.0, 4.0])], [w])
        >>> np.round(w.numpy(), 2)  # the step's directions all come out of about unit size
        array([[0.93, 0.  ],
               [0.  , 0.89]], dtype=float32)
    """

    def __init__(
        self,
        learning_rate=0.001,
        adam_beta_1=0.9,
        adam_beta_2=0.999,
        adam_weight_decay=0.004,
        epsilon=1e-7,
        weight_decay=0.004,
        exclude_layers=None,
        exclude_embeddings=True,
        muon_a=3.4445,
        muon_b=-4.7750,
        muon_c=2.0315,
        adam_lr_ratio=1,
        momentum=0.95,
        ns_steps=5,
        nesterov=True,
        rms_rate=0.2,
        **kwargs,
    ):
        super().__init__(learning_rate, weight_decay=weight_decay, **kwargs)
        check = lambda name, value, rule: check_number("Muon", name, value, rule)  # noqa: E731
        self.adam_beta_1 = check("adam_beta_1", adam_beta_1, FRACTION)
        self.adam_beta_2 = check("adam_beta_2", adam_beta_2, FRACTION)
        self.adam_weight_decay = (
            None
            if adam_weight_decay is None
            else check("adam_weight_decay", adam_weight_decay, NON_NEGATIVE)
        )
        self.epsilon = check("epsilon", epsilon, NON_NEGATIVE)
        if isinstance(exclude_layers, str):
            raise ValueError(
                "Muon: `exclude_layers` must be a list of patterns, got the string "
                f"{exclude_layers!r}"
            )
        self.exclude_layers = list(exclude_layers or [])
        self.exclude_embeddings = bool(exclude_embeddings)
        self.muon_a, self.muon_b, self.muon_c = (
            check(name, value, (lambda _: True, "a number"))
            for name, value in (("muon_a", muon_a), ("muon_b", muon_b), ("muon_c", muon_c))
        )
        self.adam_lr_ratio = check("adam_lr_ratio", adam_lr_ratio, NON_NEGATIVE)
        self.momentum = check("momentum", momentum, FRACTION)
        if isinstance(ns_steps, bool) or not isinstance(ns_steps, int) or ns_steps < 0:
            raise ValueError(f"Muon: `ns_steps` must be an int >= 0, got {ns_steps!r}")
        self.ns_steps = ns_steps
        self.nesterov = bool(nesterov)
        self.rms_rate = None if rms_rate is None else check("rms_rate", rms_rate, POSITIVE)

    def _should_use_adamw(self, variable):
        """Whether `variable` takes AdamW steps (Keras's rule): not 2-D, an embedding, excluded."""
        if len(variable.shape) != 2:
            return True
        path = variable.path or variable.name or ""
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(pattern, path) for pattern in self.exclude_layers)

    def build(self, variables):
        super().build(variables)
        self._momentums = self.add_optimizer_variables(variables, "momentum")
        self._velocities = [
            self.add_variable_from_reference(v, "velocity") if self._should_use_adamw(v) else None
            for v in variables
        ]
        # The decay differs by kind of weight, so update_step applies it, not the base class.
        self._decays = []
        for variable, decayed in zip(variables, self._decayed):
            rate = self.adam_weight_decay if self._should_use_adamw(variable) else self.weight_decay
            self._decays.append(rate if decayed and rate else None)
        self._decayed = [False] * len(self._decayed)

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        decay = self._decays[index]
        if decay is not None:
            self.assign(variable, variable - variable * (decay * learning_rate))
        m, v = self._momentums[index], self._velocities[index]
        if v is not None:
            self._adamw_step(gradient, variable, learning_rate * self.adam_lr_ratio, m, v)
            return
        self.assign(m, m * self.momentum + gradient)
        update = gradient + m * self.momentum if self.nesterov else m
        update = self._orthogonalized(update)
        if self.rms_rate is not None:
            update = update * (max(variable.shape) ** 0.5 * self.rms_rate)
        self.assign_sub(variable, update * learning_rate)

    def _adamw_step(self, gradient, variable, learning_rate, m, v):
        t = int(self.iterations.numpy()) + 1
        alpha = learning_rate * (1.0 - self.adam_beta_2**t) ** 0.5 / (1.0 - self.adam_beta_1**t)
        self.assign_add(m, (gradient - m) * (1.0 - self.adam_beta_1))
        self.assign_add(v, (gradient * gradient - v) * (1.0 - self.adam_beta_2))
        self.assign_sub(variable, m * alpha / (ops.sqrt(v) + self.epsilon))

    def _orthogonalized(self, update):
        """About `U @ V.T` of the SVD `update = U S V.T`: Newton-Schulz's quintic iteration."""
        tall = update.shape[0] > update.shape[1]
        x = ops.transpose(update) if tall else update
        x = x / (ops.sqrt(ops.sum(ops.square(x))) + 1e-7)
        for _ in range(self.ns_steps):
            gram = ops.matmul(x, ops.transpose(x))
            x = x * self.muon_a + ops.matmul(
                gram * self.muon_b + ops.matmul(gram, gram) * self.muon_c, x
            )
        return ops.transpose(x) if tall else x

    def get_config(self):
        return {
            **super().get_config(),
            "adam_beta_1": self.adam_beta_1,
            "adam_beta_2": self.adam_beta_2,
            "epsilon": self.epsilon,
            "exclude_layers": list(self.exclude_layers),
            "muon_a": self.muon_a,
            "muon_b": self.muon_b,
            "muon_c": self.muon_c,
            "adam_lr_ratio": self.adam_lr_ratio,
            "momentum": self.momentum,
            "ns_steps": self.ns_steps,
            "nesterov": self.nesterov,
            "exclude_embeddings": self.exclude_embeddings,
            "adam_weight_decay": self.adam_weight_decay,
            "rms_rate": self.rms_rate,
        }

"""`AdamW`: Adam with decoupled weight decay, on by default."""

from minikeras.optimizers.adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam with decoupled weight decay, on by default.

        w = w - w * weight_decay * learning_rate              # then Adam's rule:
        t = iterations + 1
        m = m + (g - m) * (1 - beta_1)
        v = v + (g^2 - v) * (1 - beta_2)
        v_hat = max(v_hat, v); v = v_hat                      # amsgrad only
        alpha = learning_rate * sqrt(1 - beta_2^t) / (1 - beta_1^t)
        w = w - alpha * m / (sqrt(v) + epsilon)

    Args:
        learning_rate: a float, a schedule, or a callable (of no argument, or of the step).
        weight_decay: a number >= 0 (not None).
        beta_1: decay of the first-moment estimate, in [0, 1).
        beta_2: decay of the second-moment estimate, in [0, 1).
        epsilon: a number >= 0 that keeps the division finite.
        amsgrad: use the maximum of past second moments (AMSGrad).
        **kwargs: `clipnorm`, `clipvalue`, `global_clipnorm`, `name`, as for
            `Optimizer`.

    Raises:
        ValueError: if `weight_decay` is None, or as `Adam` does.

    Example:
        >>> w = mk.Variable([1.0])
        >>> mk.optimizers.AdamW(learning_rate=0.1, weight_decay=0.5).apply([np.array([1.0])], [w])
        >>> w.numpy()  # 1 * (1 - 0.5 * 0.1) - 0.1
        array([0.85], dtype=float32)
    """

    def __init__(
        self,
        learning_rate=0.001,
        weight_decay=0.004,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        **kwargs,
    ):
        if weight_decay is None:
            raise ValueError("AdamW: `weight_decay` must be a number >= 0, got None")
        super().__init__(
            learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay=weight_decay, **kwargs
        )

"""`Dense`: `activation(inputs @ kernel + bias)`."""

from minikeras import activations, constraints, initializers, ops, regularizers
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.layer import Layer

__all__ = ["Dense", "check_positive_int"]


def check_positive_int(layer, argument, value):
    """Returns `value` if it is a positive int, else raises naming the argument.

    Args:
        layer: the layer class name, for the message.
        argument: the argument's name.
        value: the value given.

    Returns:
        `value`, as an int.

    Raises:
        ValueError: if `value` is not a positive int.

    Example:
        >>> mk.layers.dense.check_positive_int("Dense", "units", 4)
        4
    """
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{layer}: `{argument}` must be a positive int, got {value!r}")
    return value


class Dense(Layer):
    """Densely-connected layer: `activation(inputs @ kernel + bias)`.

    With a linear or relu activation the whole layer is one fused primitive
    (`ops.dense`) with a hand-written gradient.

    Args:
        units: positive int, size of the last output axis.
        activation: name or callable; None means linear.
        use_bias: whether to add a bias.
        kernel_initializer: initializer of the `(input_dim, units)` kernel.
        bias_initializer: initializer of the `(units,)` bias.
        kernel_regularizer: None, or a regularizer of the kernel (a name such
            as `"l2"`, a config dict or a callable): its penalty joins `losses`.
        bias_regularizer: None, or a regularizer of the bias.
        activity_regularizer: None, or a regularizer of the outputs, added
            to `losses` at each call (divided by the batch size, as in Keras 3).
        kernel_constraint: None, or a constraint (a name such as
            `"max_norm"`, a config dict or a callable) that the optimizer
            applies to the kernel after each update.
        bias_constraint: None, or a constraint of the bias.
        **kwargs: `name`, `trainable`, `dtype`, and Keras 2's `input_shape`.

    Input shape:
        `(batch, ..., input_dim)`: any rank of 2 or more.

    Output shape:
        `(batch, ..., units)`: the last axis becomes `units`.

    Raises:
        ValueError: if `units` is not a positive int, or later inputs change
            their last axis.

    Example:
        >>> layer = mk.layers.Dense(4, activation="relu")
        >>> layer(mk.ops.ones((2, 3))).shape
        (2, 4)
        >>> layer.kernel.shape, layer.bias.shape
        ((3, 4), (4,))
    """

    # A mask (e.g. from Embedding(mask_zero=True)) passes through unchanged, as in Keras.
    supports_masking = True

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.units = check_positive_int("Dense", "units", units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def build(self, input_shape):
        if not input_shape or input_shape[-1] is None:
            raise ValueError(
                f"Dense '{self.name}' needs inputs with a known last axis, got shape {input_shape}"
            )
        # The kernel fixes the last axis: later calls are checked against it.
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        self.kernel = self.add_weight(
            "kernel",
            shape=(input_shape[-1], self.units),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                shape=(self.units,),
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def call(self, inputs):
        if inputs.ndim < 1:
            raise ValueError(f"Dense '{self.name}' needs inputs with at least 1 axis, got a scalar")
        if self.activation is activations.relu:
            return ops.dense(inputs, self.kernel, self.bias, "relu")
        outputs = ops.dense(inputs, self.kernel, self.bias)
        return outputs if self.activation is activations.linear else self.activation(outputs)

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], self.units)

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint),
        }

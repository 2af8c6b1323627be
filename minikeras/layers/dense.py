"""`Dense`: `activation(inputs @ kernel + bias)`."""

from minikeras import activations, constraints, initializers, ops, regularizers
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.layer import Layer

__all__ = ["Dense", "check_positive_int", "refuse_keras_only", "take_keras_only"]


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


def take_keras_only(kwargs, *names):
    """Takes Keras's quantization and LoRA options out of a layer's `**kwargs`.

    Keras 3.15 writes `quantization_config` (None unless quantized) in the
    configs of `Dense`, `EinsumDense` and `Embedding`, and their constructors
    take `lora_rank` and `lora_alpha` (EinsumDense also
    `gptq_unpacked_column_size`). minikeras has no quantization or LoRA: the
    layer takes these out of `**kwargs` before `Layer.__init__` (which would
    refuse them as unknown) and hands them to `refuse_keras_only` after it.
    (Kept out of the signatures, so that a Keras file's loader still drops
    their None values as options minikeras lacks.)

    Args:
        kwargs: the layer's keyword arguments (changed in place).
        *names: the options this layer takes.

    Returns:
        A dict of the options that were given.

    Example:
        >>> kwargs = {"name": "d", "quantization_config": None}
        >>> mk.layers.dense.take_keras_only(kwargs, "lora_rank", "quantization_config"), kwargs
        ({'quantization_config': None}, {'name': 'd'})
    """
    return {name: kwargs.pop(name) for name in names if name in kwargs}


def refuse_keras_only(layer, options):
    """Refuses, naming the layer, a Keras quantization or LoRA option that is set.

    None is accepted for each (it changes nothing), and `lora_alpha` with
    anything, as Keras ignores it without `lora_rank`.

    Args:
        layer: the layer being made (its class and name go in the message).
        options: the dict `take_keras_only` returned.

    Returns:
        None.

    Raises:
        ValueError: for the first option that is set.

    Example:
        >>> dense = mk.layers.Dense(2, quantization_config=None, lora_rank=None)
        >>> mk.layers.dense.refuse_keras_only(dense, {"lora_alpha": 8.0})
    """
    for argument, value in options.items():
        if value is not None and argument != "lora_alpha":
            raise ValueError(
                f"{type(layer).__name__} '{layer.name}': {argument}={value!r:.80} is not "
                f"supported; minikeras has no quantization or LoRA (pass None)"
            )


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
        **kwargs: `name`, `trainable`, `dtype`, Keras 2's `input_shape`, and
            Keras's `quantization_config` and `lora_rank` as None only (the
            values in the config of a layer that is not quantized; minikeras
            has neither) and `lora_alpha` (ignored, as Keras ignores it then).

    Input shape:
        `(batch, ..., input_dim)`: any rank of 2 or more.

    Output shape:
        `(batch, ..., units)`: the last axis becomes `units`.

    Raises:
        ValueError: if `units` is not a positive int, `lora_rank` or
            `quantization_config` is set, or later inputs change their last axis.

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
        keras_only = take_keras_only(kwargs, "lora_rank", "lora_alpha", "quantization_config")
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.units = check_positive_int("Dense", "units", units)
        refuse_keras_only(self, keras_only)
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
        if self.activation is None or self.activation is activations.linear:
            return outputs  # (None: set on the layer after it was made, as Keras allows)
        return self.activation(outputs)

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
            "quantization_config": None,
        }

"""`EinsumDense`: a dense layer whose product with the kernel is any `einsum` equation."""

import re

import numpy as np

from minikeras import activations, constraints, initializers, ops, regularizers
from minikeras.initializers import VarianceScaling
from minikeras.layers.dense import refuse_keras_only, take_keras_only
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.layer import Layer

__all__ = ["EinsumDense"]

_EQUATION = re.compile(
    r"(?P<lead>\.\.\.)?(?P<inputs>[a-zA-Z]+)(?P<trail>\.\.\.)?,(?P<weight>[a-zA-Z]+)->"
    r"(?P<out_lead>\.\.\.)?(?P<outputs>[a-zA-Z]+)(?P<out_trail>\.\.\.)?"
)


def _parse(equation):
    """`(input letters, weight letters, output letters, elided side)` of an equation.

    The side is None (no `...`), `"left"` (`...ab,bc->...ac`) or `"right"`
    (`ab...,bc->ac...`), the three forms Keras takes.
    """
    match = _EQUATION.fullmatch(equation) if isinstance(equation, str) else None
    if match is not None:
        lead, trail = bool(match["lead"]), bool(match["trail"])
        out_lead, out_trail = bool(match["out_lead"]), bool(match["out_trail"])
        side = None
        if (lead, trail, out_lead, out_trail) == (True, False, True, False):
            side = "left"
        elif (lead, trail, out_lead, out_trail) == (False, True, False, True):
            side = "right"
        plain = not (lead or trail or out_lead or out_trail)
        if (side or plain) and (side != "right" or len(match["inputs"]) >= 2):
            return match["inputs"], match["weight"], match["outputs"], side
    raise ValueError(
        f"EinsumDense: `equation` must be of the form 'ab,bc->ac', '...ab,bc->...ac' or "
        f"'ab...,bc->ac...', got {equation!r}"
    )


class EinsumDense(Layer):
    """A dense layer computing `activation(einsum(equation, inputs, kernel) + bias)`.

    The equation names the axes of the inputs, of the kernel and of the
    outputs; the kernel's shape follows from it and `output_shape`. `"ab,bc->ac"`
    is `Dense`; `"abc,cd->abd"` applies it at every step of a sequence;
    `"abc,cde->abde"` projects each step to several heads, as attention does.
    An ellipsis stands for any number of axes, on the left (`"...b,bc->...c"`,
    the batch among them) or on the right (`"ab...,bc->ac..."`).

    Args:
        equation: the einsum equation, `inputs,kernel->outputs`.
        output_shape: the outputs' shape without the batch axis and the
            axes under the ellipsis (an int for one axis); `None` entries are
            taken from the inputs where the letter is shared with them.
        activation: name or callable; None means linear.
        bias_axes: None (no bias) or a string of output letters that get a
            bias; the bias broadcasts along the other output axes.
        kernel_initializer: initializer of the kernel; a variance-scaling one
            (the default, glorot uniform) takes its fans from the kernel axes
            shared with the inputs and with the outputs, as in Keras.
        bias_initializer: initializer of the bias.
        kernel_regularizer: None or a regularizer of the kernel.
        bias_regularizer: None or a regularizer of the bias.
        kernel_constraint: None or a constraint of the kernel.
        bias_constraint: None or a constraint of the bias.
        **kwargs: `name`, `trainable`, `dtype`, `activity_regularizer`, and
            Keras's `quantization_config`, `lora_rank` and
            `gptq_unpacked_column_size` as None only (the values in the config
            of a layer that is not quantized; minikeras has neither) and
            `lora_alpha` (ignored, as Keras ignores it then).

    Input shape:
        As the equation's input letters say (with any number of axes under an
        ellipsis); the sizes of axes the kernel uses must be known.

    Output shape:
        As the equation's output letters say, sizes from `output_shape` and
        the inputs.

    Raises:
        ValueError: for an equation not of the three forms, a kernel or
            output letter found nowhere, a bias letter not in the outputs,
            inputs whose rank does not fit the equation, an `output_shape`
            that contradicts the inputs, or a Keras quantization or LoRA
            option that is set.

    Example:
        >>> layer = mk.layers.EinsumDense(
        ...     "abc,cde->abde", output_shape=(None, 2, 4), bias_axes="de"
        ... )
        >>> layer(np.ones((3, 5, 8))).shape
        (3, 5, 2, 4)
        >>> layer.kernel.shape, layer.bias.shape
        ((8, 2, 4), (2, 4))
    """

    def __init__(
        self,
        equation,
        output_shape,
        activation=None,
        bias_axes=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        keras_only = take_keras_only(
            kwargs, "lora_rank", "lora_alpha", "gptq_unpacked_column_size", "quantization_config"
        )
        super().__init__(**kwargs)
        refuse_keras_only(self, keras_only)
        self._letters = _parse(equation)
        self.equation = equation
        if isinstance(output_shape, (int, np.integer)) and not isinstance(output_shape, bool):
            output_shape = (int(output_shape),)
        try:
            output_shape = tuple(output_shape)
        except TypeError:
            output_shape = None
        if output_shape is None or any(
            s is not None and (isinstance(s, bool) or not isinstance(s, int) or s < 0)
            for s in output_shape
        ):
            raise ValueError(
                f"EinsumDense: `output_shape` must be an int or a tuple of ints and None, "
                f"got {output_shape!r}"
            )
        self.partial_output_shape = output_shape
        outputs = self._letters[2]
        if bias_axes is not None and (
            not isinstance(bias_axes, str) or any(c not in outputs for c in bias_axes)
        ):
            raise ValueError(
                f"EinsumDense: `bias_axes` must be letters of the output '{outputs}' in "
                f"{equation!r}, got {bias_axes!r}"
            )
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def _shapes(self, input_shape):
        """(kernel shape, bias shape or None, output shape, the kernel's (input, output) axes)."""
        inputs, weight, outputs, side = self._letters
        input_shape = tuple(input_shape)
        where = f"EinsumDense '{self.name}' with equation {self.equation!r}"
        elided = len(input_shape) - len(inputs)
        if elided < 0 or (side is None and elided):
            raise ValueError(
                f"{where} needs inputs with {len(inputs)} axes"
                + (" or more" if side else "")
                + f", got shape {input_shape}"
            )
        partial = self.partial_output_shape
        if side == "left":
            expected, full = len(outputs), input_shape[:elided] + partial
            output_offset, input_offset = elided, elided
        else:
            expected, full = len(outputs) - 1, (input_shape[0], *partial)
            full = full + (input_shape[len(input_shape) - elided :] if elided else ())
            output_offset, input_offset = 0, 0
        if len(partial) != expected:
            raise ValueError(
                f"{where} needs an output_shape of {expected} sizes (the output axes "
                f"'{outputs}' without the batch and the ellipsis), got {partial}"
            )
        size_of = {c: input_shape[i + input_offset] for i, c in enumerate(inputs)}
        full = list(full)
        for i, c in enumerate(outputs):
            position = i + output_offset
            if c in size_of:
                if full[position] is None:
                    full[position] = size_of[c]
                elif size_of[c] is not None and full[position] != size_of[c]:
                    raise ValueError(
                        f"{where}: output_shape gives axis '{c}' size {full[position]}, "
                        f"but the inputs have {size_of[c]} (shape {input_shape})"
                    )
            elif c not in weight:
                raise ValueError(f"{where}: output axis '{c}' is in neither inputs nor kernel")
        out_size = {c: full[i + output_offset] for i, c in enumerate(outputs)}
        kernel_shape, input_axes, output_axes = [], [], []
        for axis, c in enumerate(weight):
            size = out_size.get(c, size_of.get(c))
            if c not in out_size and c not in size_of:
                raise ValueError(f"{where}: kernel axis '{c}' is in neither inputs nor outputs")
            if size is None:
                raise ValueError(
                    f"{where} needs a known size for kernel axis '{c}', got inputs of shape "
                    f"{input_shape} and output_shape {partial}"
                )
            kernel_shape.append(size)
            (output_axes if c in out_size else input_axes).append(axis)
        bias_shape = None
        if self.bias_axes:
            first = min(outputs.index(c) for c in self.bias_axes)
            bias_shape = [out_size[c] if c in self.bias_axes else 1 for c in outputs[first:]]
            bias_shape += [1] * (elided if side == "right" else 0)
            if None in bias_shape:
                raise ValueError(f"{where} needs known sizes for the bias axes '{self.bias_axes}'")
        axes = (input_axes, output_axes)
        return tuple(kernel_shape), bias_shape and tuple(bias_shape), tuple(full), axes

    def build(self, input_shape):
        kernel_shape, bias_shape, _, axes = self._shapes(input_shape)
        self.input_spec = InputSpec(ndim=len(input_shape))
        initializer = self.kernel_initializer
        if isinstance(initializer, VarianceScaling):
            # Keras's fans: the kernel axes summed over, and those that reach the outputs.
            initializer = initializer.with_fan_axes(*axes)

        self.kernel = self.add_weight(
            "kernel",
            shape=kernel_shape,
            initializer=initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.bias = None
        if bias_shape is not None:
            self.bias = self.add_weight(
                "bias",
                shape=bias_shape,
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def call(self, inputs):
        outputs = ops.einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            outputs = outputs + self.bias
        if self.activation is None or self.activation is activations.linear:
            return outputs  # (None: set on the layer after it was made, as Keras allows)
        return self.activation(outputs)

    def compute_output_shape(self, input_shape):
        return self._shapes(input_shape)[2]

    def get_config(self):
        partial = self.partial_output_shape
        return {
            **super().get_config(),
            "equation": self.equation,
            "output_shape": list(partial),
            "activation": activations.serialize(self.activation),
            "bias_axes": self.bias_axes,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint),
            "quantization_config": None,
        }

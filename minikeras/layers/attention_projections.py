"""`MultiHeadAttention`'s projections: the four it keeps as its own weights, and the gate.

Keras builds each projection as an `EinsumDense` sub-layer. minikeras keeps
the query, key, value and output kernels and biases on the layer itself
(one flat matrix product each, with Keras's shapes, fans and names), and the
optional gate (`use_gate=True`) as an `EinsumDense` named `gate`, as Keras
does, so that its weights sit where Keras's files keep them
(`_gate_dense`). Each projection's outputs take the activity penalty, as
Keras hands `activity_regularizer` to each sub-layer.
"""

import math

from minikeras import initializers, ops
from minikeras.layers.einsum_dense import EinsumDense
from minikeras.layers.layer_losses import activity_loss

__all__ = ["AttentionProjections"]


class AttentionProjections:
    """Mixin for `MultiHeadAttention`: makes and applies its projections.

    The layer using it sets `num_heads`, `value_dim`, `use_bias`, the
    initializers, regularizers and constraints, and `_activity_regularizer`.

    Example:
        >>> issubclass(
        ...     mk.layers.MultiHeadAttention, mk.layers.attention_projections.AttentionProjections
        ... )
        True
    """

    @property
    def gate_dense(self):
        """The gate's projection, an `EinsumDense` (once built with `use_gate=True`), or None."""
        return self.__dict__.get("_gate_dense")

    def _gate(self, query_shape):
        """The gate: `sigmoid(query @ kernel + bias)`, an EinsumDense as Keras's `gate`."""
        letters = "abcdefghijklmnopqrstuvwxyz"
        steps = letters[: len(query_shape) - 1]  # the batch and the steps axes
        features, heads, size = letters[len(steps) : len(steps) + 3]
        gate = EinsumDense(
            f"{steps}{features},{features}{heads}{size}->{steps}{heads}{size}",
            (*[None] * (len(steps) - 1), self.num_heads, self.value_dim),
            activation="sigmoid",
            bias_axes=heads + size if self.use_bias else None,
            # A fresh initializer from the config, as Keras makes one per projection.
            kernel_initializer=initializers.get(initializers.serialize(self.kernel_initializer)),
            bias_initializer=initializers.get(initializers.serialize(self.bias_initializer)),
            kernel_regularizer=self.kernel_regularizer,
            bias_regularizer=self.bias_regularizer,
            activity_regularizer=self._activity_regularizer,  # on the gate's outputs, as Keras
            kernel_constraint=self.kernel_constraint,
            bias_constraint=self.bias_constraint,
            name="gate",
            dtype=self.dtype_policy,
        )
        gate.build(tuple(query_shape))
        return gate

    def _projection(self, name, kernel_shape, bias_shape=None, input_axes=1):
        initializer = self.kernel_initializer
        if isinstance(initializer, initializers.VarianceScaling):  # fans as in Keras 3.15
            axes = list(range(len(kernel_shape)))
            initializer = initializer.with_fan_axes(axes[:input_axes], axes[input_axes:])
        kernel = self.add_weight(
            f"{name}/kernel",
            shape=kernel_shape,
            initializer=initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        bias = None
        if self.use_bias:
            bias = self.add_weight(
                f"{name}/bias",
                shape=bias_shape or kernel_shape[1:],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        return kernel, bias

    def _project(self, inputs, kernel, bias):
        """`inputs @ kernel + bias` on `(batch, ..., dim)`: `(batch, steps, heads, size)`."""
        flat_kernel = ops.reshape(kernel, (kernel.shape[0], -1))
        flat_bias = None if bias is None else ops.reshape(bias, (-1,))
        projected = ops.dense(inputs, flat_kernel, flat_bias)
        self._regularize_activity(projected)
        steps = math.prod(inputs.shape[1:-1])  # written out: -1 is ambiguous for 0 samples
        return ops.reshape(projected, (inputs.shape[0], steps, *kernel.shape[1:]))

    def _regularize_activity(self, projected):
        # The penalty a Keras sub-layer adds on its outputs (as this package's Layer does).
        if self._activity_regularizer is not None:
            self.add_loss(activity_loss(self._activity_regularizer, projected))

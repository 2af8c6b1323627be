"""Merge layers: combine a list of tensors into one (`Add`, `Concatenate`, ...).

Each is called on a list, `Add()([a, b])`, in eager code as in functional
models. Shapes are checked when the layer is built and on every call, and
errors name the layer and every shape it got.
"""

import functools

import numpy as np

from minikeras import ops
from minikeras.layers.layer import Layer

__all__ = ["Add", "Average", "Concatenate", "Maximum", "Minimum", "Multiply", "Subtract"]


def _describe(shapes):
    return ", ".join(str(tuple(s)) for s in shapes)


class _Merge(Layer):
    """The shared part: input checks, element-wise output shape, and the reduction."""

    _exactly = None  # a required number of inputs (Subtract: 2)
    _never_has_weights = True  # (`layers.add([x, y])` inside a call() makes no weights)

    def _check_list(self, shapes):
        """Checks that `shapes` (of what the layer was called on) is a list of shapes."""
        name = f"{type(self).__name__} '{self.name}'"
        if not isinstance(shapes, (list, tuple)) or not all(
            isinstance(s, (list, tuple)) for s in shapes
        ):
            raise ValueError(
                f"{name} should be called on a list of tensors, got one input of shape {shapes}"
            )
        if self._exactly is not None and len(shapes) != self._exactly:
            raise ValueError(
                f"{name} should be called on exactly {self._exactly} inputs, got {len(shapes)}"
                + (f" of shapes {_describe(shapes)}" if shapes else "")
            )
        if not shapes:
            raise ValueError(f"{name} should be called on a list of at least 1 input, got []")

    def build(self, input_shape):
        self.compute_output_shape(input_shape)

    def compute_mask(self, inputs, mask=None):
        """The inputs' masks combined, as Keras 3 does: a step is kept where any input
        keeps it; None unless every input has a mask. (Keras 2 kept a step only where
        every mask did.)

        Args:
            inputs: the list of inputs.
            mask: the list of their masks (None for an input without one), or None.

        Returns:
            A boolean Tensor, or None.

        Example:
            >>> masks = [np.array([[True, True, False]]), np.array([[True, False, False]])]
            >>> mk.layers.Add().compute_mask([np.ones((1, 3, 2))] * 2, masks).numpy()
            array([[ True,  True, False]])
        """
        if not isinstance(mask, (list, tuple)) or any(m is None for m in mask):
            return None
        return ops.convert_to_tensor(np.logical_or.reduce([np.asarray(m, bool) for m in mask]))

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            self._check_list(inputs.shape)
        self.compute_output_shape([x.shape for x in inputs])
        return self._merge(list(inputs))

    def compute_output_shape(self, input_shape):
        """The broadcast of the inputs' shapes (equal ranks; sizes equal, 1 or unknown)."""
        self._check_list(input_shape)
        ranks = {len(s) for s in input_shape}
        if len(ranks) > 1:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' needs inputs of one rank, got shapes "
                f"{_describe(input_shape)}"
            )
        output = []
        for sizes in zip(*input_shape):
            known = {s for s in sizes if s is not None and s != 1}
            if len(known) > 1:
                raise ValueError(
                    f"{type(self).__name__} '{self.name}' needs inputs of the same shape "
                    f"(or size 1 to broadcast), got shapes {_describe(input_shape)}"
                )
            if known:
                output.append(known.pop())
            else:
                output.append(None if None in sizes else 1)
        return tuple(output)

    def _merge(self, inputs):
        raise NotImplementedError


class Add(_Merge):
    """Adds a list of tensors element-wise.

    Args:
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        A list of tensors of the same shape, `(batch, ...)`; axes of size 1 broadcast.

    Output shape:
        Their common (broadcast) shape.

    Returns:
        When called on a list of tensors of the same shape (size-1 axes
        broadcast): their sum.

    Raises:
        ValueError: if called on something other than a non-empty list, or on
            shapes that do not match, naming all of them.

    Example:
        >>> mk.layers.Add()([np.ones((2, 3)), np.full((2, 3), 2.0)]).numpy()[0]
        array([3., 3., 3.], dtype=float32)
        >>> a, b = mk.Input(shape=(4,)), mk.Input(shape=(4,))
        >>> mk.layers.Add()([a, b]).shape
        (None, 4)
    """

    def _merge(self, inputs):
        return functools.reduce(ops.add, inputs)


class Subtract(_Merge):
    """Subtracts the second of two tensors from the first, element-wise.

    Args:
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        A list of two tensors of the same shape, `(batch, ...)`; axes of size 1
        broadcast.

    Output shape:
        Their common (broadcast) shape.

    Returns:
        When called on `[a, b]`: `a - b`.

    Raises:
        ValueError: if not called on exactly two tensors, or on shapes that do
            not match.

    Example:
        >>> mk.layers.Subtract()([np.full((1, 2), 5.0), np.ones((1, 2))]).numpy()
        array([[4., 4.]], dtype=float32)
    """

    _exactly = 2

    def _merge(self, inputs):
        return ops.subtract(inputs[0], inputs[1])


class Multiply(_Merge):
    """Multiplies a list of tensors element-wise.

    Args:
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        A list of tensors of the same shape, `(batch, ...)`; axes of size 1 broadcast.

    Output shape:
        Their common (broadcast) shape.

    Returns:
        When called on a list of tensors: their element-wise product.

    Raises:
        ValueError: if called on something other than a non-empty list, or on
            shapes that do not match.

    Example:
        >>> mk.layers.Multiply()([np.full((1, 2), 3.0), np.full((1, 2), 2.0)]).numpy()
        array([[6., 6.]], dtype=float32)
    """

    def _merge(self, inputs):
        return functools.reduce(ops.multiply, inputs)


class Average(_Merge):
    """Averages a list of tensors element-wise.

    Args:
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        A list of tensors of the same shape, `(batch, ...)`; axes of size 1 broadcast.

    Output shape:
        Their common (broadcast) shape.

    Returns:
        When called on a list of tensors: their element-wise mean.

    Raises:
        ValueError: if called on something other than a non-empty list, or on
            shapes that do not match.

    Example:
        >>> mk.layers.Average()([np.zeros((1, 2)), np.full((1, 2), 4.0)]).numpy()
        array([[2., 2.]], dtype=float32)
    """

    def _merge(self, inputs):
        return functools.reduce(ops.add, inputs) * (1.0 / len(inputs))


class Maximum(_Merge):
    """The element-wise maximum of a list of tensors.

    Args:
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        A list of tensors of the same shape, `(batch, ...)`; axes of size 1 broadcast.

    Output shape:
        Their common (broadcast) shape.

    Returns:
        When called on a list of tensors: their element-wise maximum.

    Raises:
        ValueError: if called on something other than a non-empty list, or on
            shapes that do not match.

    Example:
        >>> mk.layers.Maximum()([np.array([[1.0, 5.0]]), np.array([[3.0, 2.0]])]).numpy()
        array([[3., 5.]], dtype=float32)
    """

    def _merge(self, inputs):
        return functools.reduce(ops.maximum, inputs)


class Minimum(_Merge):
    """The element-wise minimum of a list of tensors.

    Args:
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        A list of tensors of the same shape, `(batch, ...)`; axes of size 1 broadcast.

    Output shape:
        Their common (broadcast) shape.

    Returns:
        When called on a list of tensors: their element-wise minimum.

    Raises:
        ValueError: if called on something other than a non-empty list, or on
            shapes that do not match.

    Example:
        >>> mk.layers.Minimum()([np.array([[1.0, 5.0]]), np.array([[3.0, 2.0]])]).numpy()
        array([[1., 2.]], dtype=float32)
    """

    def _merge(self, inputs):
        return functools.reduce(ops.minimum, inputs)


class Concatenate(_Merge):
    """Joins a list of tensors along `axis`.

    Args:
        axis: the axis to join on; the other axes must match.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        A list of tensors of one rank whose shapes agree on every axis but `axis`.

    Output shape:
        Their shape, with `axis` the sum of their sizes along it.

    Returns:
        When called on a list of tensors: one tensor whose `axis` is the sum
        of theirs.

    Raises:
        ValueError: if `axis` is not an int; if called on something other than
            a non-empty list, or on tensors of different ranks, whose `axis` is
            out of range, or whose other axes differ, naming all the shapes.

    Example:
        >>> mk.layers.Concatenate()([np.zeros((2, 3)), np.ones((2, 1))]).shape
        (2, 4)
        >>> a, b = mk.Input(shape=(2, 5)), mk.Input(shape=(3, 5))
        >>> mk.layers.Concatenate(axis=1)([a, b]).shape
        (None, 5, 5)
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ValueError(f"Concatenate: `axis` must be an int, got {axis!r}")
        self.axis = axis

    def compute_mask(self, inputs, mask=None):
        """The masks joined as the inputs are, Keras's way: an input without one counts as
        kept everywhere, each mask is widened to its input's shape, and a position is kept
        where any value along the last axis is.

        Args:
            inputs: the list of inputs.
            mask: the list of their masks (None for an input without one), or None.

        Returns:
            A boolean Tensor, or None if no input has a mask.

        Example:
            >>> mask = np.array([[True, False]])
            >>> layer = mk.layers.Concatenate(axis=1)
            >>> layer.compute_mask([np.ones((1, 2, 3))] * 2, [mask, None]).numpy()
            array([[ True, False,  True,  True]])
        """
        if not isinstance(mask, (list, tuple)) or all(m is None for m in mask):
            return None
        full = []
        for x, m in zip(inputs, mask):
            shape = np.shape(x)
            if m is None:
                full.append(np.ones(shape, dtype=bool))
                continue
            m = np.asarray(m, dtype=bool)
            full.append(np.broadcast_to(m[..., None], shape) if m.ndim < len(shape) else m)
        return ops.convert_to_tensor(np.any(np.concatenate(full, axis=self.axis), axis=-1))

    def compute_output_shape(self, input_shape):
        self._check_list(input_shape)
        name = f"Concatenate '{self.name}'"
        rank = len(input_shape[0])
        if any(len(s) != rank for s in input_shape):
            raise ValueError(f"{name} needs inputs of one rank, got {_describe(input_shape)}")
        if not -rank <= self.axis < rank:
            raise ValueError(
                f"{name}: axis {self.axis} is out of range for inputs of shapes "
                f"{_describe(input_shape)}"
            )
        axis = self.axis % rank
        output = []
        for index, sizes in enumerate(zip(*input_shape)):
            if index == axis:
                output.append(None if None in sizes else sum(sizes))
                continue
            known = {s for s in sizes if s is not None}
            if len(known) > 1:
                raise ValueError(
                    f"{name} needs inputs whose shapes match except on axis {self.axis}, "
                    f"got {_describe(input_shape)}"
                )
            output.append(known.pop() if known else None)
        return tuple(output)

    def _merge(self, inputs):
        return ops.concatenate(inputs, axis=self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}

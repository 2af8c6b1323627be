"""Recurrent ops: `simple_rnn`, `lstm` and `gru` over a whole sequence, and `zero_states`.

Each op checks its arguments and, for the activations the fused kernels know
(`tanh`, `sigmoid`, `relu` and `linear`: their derivatives follow from their
outputs), calls one fused primitive of `ops.recurrent_primitives`, which a
tape records as one node for the whole sequence. Any other activation (a
callable on Tensors) runs an unfused step loop of ordinary ops, which
autograd differentiates: correct, and much slower.
"""

import numpy as np

from minikeras import config
from minikeras.engine.primitive import call_primitive
from minikeras.engine.tensor import getval
from minikeras.ops import recurrent_layout as layout
from minikeras.ops.activation_functions import relu, sigmoid
from minikeras.ops.comparison import where
from minikeras.ops.core import op_error, value_of, wrap
from minikeras.ops.elementary import tanh
from minikeras.ops.matrix_products import matmul
from minikeras.ops.operands import narrowed_operands
from minikeras.ops.recurrent_primitives import (
    _batch_zeros,
    _gru,
    _lstm,
    _simple_rnn,
    _zeros_if_none,
)
from minikeras.ops.shape import stack

__all__ = ["gru", "lstm", "simple_rnn", "zero_states"]

FUSED_ACTIVATIONS = tuple(layout.ACTIVATIONS)
_UNFUSED = {"tanh": tanh, "sigmoid": sigmoid, "relu": relu, "linear": lambda x: x}


# ------------------------------------------------------------- unfused path


def _unfused_loop(step, x, states, mask, go_backwards):
    """Runs `states = step(x_t, states)` over time with ordinary ops; returns
    (outputs in processing order, final states)."""
    steps = x.shape[1]
    outputs = []
    for t in reversed(range(steps)) if go_backwards else range(steps):
        new_states = step(x[:, t], states)
        if mask is not None:
            keep = mask[:, t : t + 1]
            new_states = [where(keep, new, old) for new, old in zip(new_states, states)]
        states = new_states
        outputs.append(states[0])
    return stack(outputs, axis=1), states


def _zeros_for(states, x, recurrent_kernel):
    """The unfused loop's first states as Tensors: the given ones, zeros for None."""
    dtype = np.result_type(getval(x))  # (the kernel's: `_check` cast the inputs to it)
    return [wrap(_zeros_if_none(state, x, recurrent_kernel, dtype)) for state in states]


def _activation(name_or_callable):
    if isinstance(name_or_callable, str):
        return _UNFUSED[name_or_callable]
    return name_or_callable


# ------------------------------------------------------------------ checks


def _check(op, inputs, kernel, recurrent_kernel, bias, states, mask, gates, bias_shapes):
    """Reads and checks the arguments; returns their values (states not given as None)."""
    # Read together (`ops.operands`): numpy float64 kernels beside float32 Tensor inputs
    # (or the other way) take the Tensor's precision; the kernel's dtype rules below.
    inputs, kernel, recurrent_kernel, bias, *states = narrowed_operands(
        inputs, kernel, recurrent_kernel, bias, *states
    )
    x, kernel_value = value_of(inputs), value_of(kernel)
    recurrent_value = value_of(recurrent_kernel)
    bias_value = None if bias is None else value_of(bias)
    if np.ndim(x) != 3:
        raise op_error(op, "inputs must have shape (batch, time, features)", x)
    batch, steps, features = np.shape(x)
    if steps == 0:
        raise op_error(op, "inputs need at least one time step", x)
    if np.ndim(kernel_value) != 2 or np.shape(kernel_value)[0] != features:
        raise op_error(op, "kernel must have shape (features, gates * units)", x, kernel_value)
    units = np.shape(kernel_value)[1] // gates
    if np.shape(kernel_value)[1] != gates * units or np.shape(recurrent_value) != (
        units,
        gates * units,
    ):
        raise op_error(
            op,
            f"kernel and recurrent_kernel must have shapes (features, {gates} * units) and "
            f"(units, {gates} * units)",
            kernel_value,
            recurrent_value,
        )
    if bias_value is not None and np.shape(bias_value) not in [s(units) for s in bias_shapes]:
        expected = " or ".join(str(s(units)) for s in bias_shapes)
        raise op_error(op, f"bias must have shape {expected}", kernel_value, bias_value)
    dtype = np.result_type(getval(kernel_value))
    if np.result_type(getval(x)) != dtype:
        x = x.astype(dtype)
    values = []
    for state in states:
        if state is None:  # (zeros, made by the fused primitive or `_zeros_for`)
            values.append(None)
            continue
        state = value_of(state)
        if np.shape(state) != (batch, units):
            raise op_error(op, f"each initial state must have shape ({batch}, {units})", x, state)
        values.append(state)
    if mask is not None:
        mask = np.asarray(getval(value_of(mask)))
        if mask.shape == (batch, steps, 1):  # (Keras takes a trailing axis of 1 too)
            mask = mask[..., 0]
        if mask.shape != (batch, steps):
            raise op_error(op, f"mask must have shape ({batch}, {steps})", x, mask)
        mask = mask.astype(bool, copy=False)
    return x, kernel_value, recurrent_value, bias_value, values, mask


def _states(initial_state, count):
    if initial_state is None:
        return [None] * count
    states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
    if len(states) != count:
        raise ValueError(f"initial_state must hold {count} state(s), got {len(states)}")
    return states


def _fused(*activations):
    return all(isinstance(a, str) and a in FUSED_ACTIVATIONS for a in activations)


# ---------------------------------------------------------------- public ops


def simple_rnn(
    inputs,
    kernel,
    recurrent_kernel,
    bias=None,
    initial_state=None,
    mask=None,
    go_backwards=False,
    activation="tanh",
):
    """A fully-connected RNN over a sequence: `h_t = activation(x_t W + h_{t-1} U + b)`.

    Args:
        inputs: Tensor of shape `(batch, time, features)`.
        kernel: `(features, units)`.
        recurrent_kernel: `(units, units)`.
        bias: optional `(units,)`.
        initial_state: optional `(batch, units)` Tensor (or a list of one);
            zeros by default.
        mask: optional `(batch, time)` booleans; a False step keeps the
            previous state (and output).
        go_backwards: process the sequence from its end; the outputs are
            then in processing order (reversed), as in Keras.
        activation: `"tanh"`, `"sigmoid"`, `"relu"`, `"linear"` (fused), or
            any callable on Tensors (unfused, slower).

    Returns:
        `(outputs, state)`: the `(batch, time, units)` states of every step,
        and the final `(batch, units)` state.

    Raises:
        ValueError: if the shapes do not fit.

    Example:
        >>> outputs, state = mk.ops.simple_rnn(
        ...     mk.ops.ones((2, 5, 3)), mk.ops.ones((3, 4)), mk.ops.zeros((4, 4))
        ... )
        >>> outputs.shape, state.shape
        ((2, 5, 4), (2, 4))
    """
    states = _states(initial_state, 1)
    x, w, u, b, (h0,), mask = _check(
        "simple_rnn", inputs, kernel, recurrent_kernel, bias, states, mask, 1, [lambda n: (n,)]
    )
    if _fused(activation):
        outputs, h = call_primitive(
            _simple_rnn, x, w, u, b, h0, mask, bool(go_backwards), activation
        )
        return wrap(outputs), wrap(h)
    act = _activation(activation)

    def step(x_t, states):
        z = matmul(x_t, wrap(w)) + matmul(states[0], wrap(u))
        return [act(z if b is None else z + wrap(b))]

    outputs, (h,) = _unfused_loop(step, wrap(x), _zeros_for([h0], x, u), mask, go_backwards)
    return outputs, h


def lstm(
    inputs,
    kernel,
    recurrent_kernel,
    bias=None,
    initial_state=None,
    mask=None,
    go_backwards=False,
    activation="tanh",
    recurrent_activation="sigmoid",
):
    """A long short-term memory layer's loop over a sequence (Keras's equations).

        z = x_t W + h_{t-1} U + b;  i, f, g, o = split(z, 4)  (Keras's order i, f, c, o)
        i, f, o = recurrent_activation(i, f, o);  g = activation(g)
        c_t = f c_{t-1} + i g;  h_t = o activation(c_t)

    Args:
        inputs: Tensor of shape `(batch, time, features)`.
        kernel: `(features, 4 * units)`.
        recurrent_kernel: `(units, 4 * units)`.
        bias: optional `(4 * units,)`.
        initial_state: optional `[h, c]`, each `(batch, units)`; zeros by default.
        mask: optional `(batch, time)` booleans; a False step keeps the
            previous states (and output).
        go_backwards: process the sequence from its end; the outputs are
            then in processing order (reversed), as in Keras.
        activation: `"tanh"`, `"sigmoid"`, `"relu"`, `"linear"` (fused), or
            any callable on Tensors (unfused, slower).
        recurrent_activation: the gates' activation, same choices.

    Returns:
        `(outputs, h, c)`: the `(batch, time, units)` outputs of every step,
        and the final `(batch, units)` states.

    Raises:
        ValueError: if the shapes do not fit.

    Example:
        >>> x = mk.ops.ones((2, 5, 3))
        >>> outputs, h, c = mk.ops.lstm(
        ...     x, mk.ops.ones((3, 8)), mk.ops.zeros((2, 8)), mk.ops.zeros(8)
        ... )
        >>> outputs.shape, h.shape, c.shape
        ((2, 5, 2), (2, 2), (2, 2))
    """
    states = _states(initial_state, 2)
    x, w, u, b, (h0, c0), mask = _check(
        "lstm", inputs, kernel, recurrent_kernel, bias, states, mask, 4, [lambda n: (4 * n,)]
    )
    if _fused(activation, recurrent_activation):
        args = (mask, bool(go_backwards), activation, recurrent_activation)
        outputs, h, c = call_primitive(_lstm, x, w, u, b, h0, c0, *args)
        return wrap(outputs), wrap(h), wrap(c)
    act, gate = _activation(activation), _activation(recurrent_activation)
    units = np.shape(u)[0]

    def step(x_t, states):
        h, c = states
        z = matmul(x_t, wrap(w)) + matmul(h, wrap(u))
        z = z if b is None else z + wrap(b)
        i, f = gate(z[:, :units]), gate(z[:, units : 2 * units])
        g, o = act(z[:, 2 * units : 3 * units]), gate(z[:, 3 * units :])
        c = f * c + i * g
        return [o * act(c), c]

    outputs, (h, c) = _unfused_loop(step, wrap(x), _zeros_for([h0, c0], x, u), mask, go_backwards)
    return outputs, h, c


def gru(
    inputs,
    kernel,
    recurrent_kernel,
    bias=None,
    initial_state=None,
    mask=None,
    go_backwards=False,
    reset_after=True,
    activation="tanh",
    recurrent_activation="sigmoid",
):
    """A gated recurrent unit's loop over a sequence (Keras's equations).

        x_z, x_r, x_h = split(x_t W + b_in, 3)
        reset_after:  h_z, h_r, h_h = split(h_{t-1} U + b_rec, 3)
                      z, r = recurrent_activation(x_z + h_z, x_r + h_r)
                      hh = activation(x_h + r * h_h)
        otherwise:    z, r from h_{t-1} U[:, :2 units];  hh = activation(x_h + (r h_{t-1}) U_h)
        h_t = z h_{t-1} + (1 - z) hh

    Args:
        inputs: Tensor of shape `(batch, time, features)`.
        kernel: `(features, 3 * units)`, gates in Keras's order z, r, h.
        recurrent_kernel: `(units, 3 * units)`.
        bias: optional; `(2, 3 * units)` (input and recurrent biases) when
            `reset_after`, else `(3 * units,)`.
        initial_state: optional `(batch, units)` Tensor (or a list of one).
        mask: optional `(batch, time)` booleans; a False step keeps the
            previous state (and output).
        go_backwards: process the sequence from its end (outputs reversed).
        reset_after: apply the reset gate after the recurrent product
            (Keras's default, cuDNN-compatible).
        activation: the candidate's activation; fused names as for `lstm`,
            or any callable on Tensors.
        recurrent_activation: the gates' activation.

    Returns:
        `(outputs, state)`: `(batch, time, units)` and `(batch, units)`.

    Raises:
        ValueError: if the shapes do not fit.

    Example:
        >>> outputs, h = mk.ops.gru(
        ...     mk.ops.ones((2, 5, 3)), mk.ops.ones((3, 6)), mk.ops.zeros((2, 6))
        ... )
        >>> outputs.shape, h.shape
        ((2, 5, 2), (2, 2))
    """
    states = _states(initial_state, 1)
    bias_shape = (lambda n: (2, 3 * n)) if reset_after else (lambda n: (3 * n,))
    x, w, u, b, (h0,), mask = _check(
        "gru", inputs, kernel, recurrent_kernel, bias, states, mask, 3, [bias_shape]
    )
    if _fused(activation, recurrent_activation):
        args = (mask, bool(go_backwards), bool(reset_after), activation, recurrent_activation)
        outputs, h = call_primitive(_gru, x, w, u, b, h0, *args)
        return wrap(outputs), wrap(h)
    act, gate = _activation(activation), _activation(recurrent_activation)
    units = np.shape(u)[0]
    input_bias, recurrent_bias = (b[0], b[1]) if reset_after and b is not None else (b, None)

    def step(x_t, states):
        h = states[0]
        x_proj = matmul(x_t, wrap(w))
        x_proj = x_proj if input_bias is None else x_proj + wrap(input_bias)
        kernel_zr = wrap(u)[:, : 2 * units] if not reset_after else wrap(u)
        inner = matmul(h, kernel_zr)
        if recurrent_bias is not None:
            inner = inner + wrap(recurrent_bias)
        z = gate(x_proj[:, :units] + inner[:, :units])
        r = gate(x_proj[:, units : 2 * units] + inner[:, units : 2 * units])
        if reset_after:
            candidate = r * inner[:, 2 * units :]
        else:
            candidate = matmul(r * h, wrap(u)[:, 2 * units :])
        hh = act(x_proj[:, 2 * units :] + candidate)
        return [z * h + (1.0 - z) * hh]

    outputs, (h,) = _unfused_loop(step, wrap(x), _zeros_for([h0], x, u), mask, go_backwards)
    return outputs, h


def zero_states(sequences, sizes, dtype=None):
    """The zero states a batch of sequences starts from: `(batch, size)` for each size.

    Each is made by an op of `sequences` (whose values it does not read, and
    whose gradient from it is zero), so that a recorded step
    (`engine.replay`) makes them again for each batch it replays rather
    than holding the recorded batch's arrays. `layers.RNN` starts built-in
    cells from these.

    Args:
        sequences: a Tensor or array whose first axis is the batch.
        sizes: the states' sizes, non-negative ints.
        dtype: the states' dtype; float32 (`config.floatx()`) unless given.

    Returns:
        A list of Tensors, one per size.

    Raises:
        ValueError: if `sequences` has no axis or a size is not a non-negative int.
        TypeError: if `dtype` is not a dtype.

    Example:
        >>> states = mk.ops.recurrent.zero_states(np.ones((2, 5, 3)), [4, 1])
        >>> [(s.shape, str(s.dtype)) for s in states]
        [((2, 4), 'float32'), ((2, 1), 'float32')]
    """
    value = value_of(sequences)
    if not np.ndim(value):
        raise op_error("zero_states", "sequences need a batch axis", value)
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
            raise ValueError(f"zero_states: each size must be a non-negative int, got {size!r}")
    try:
        dtype = config.standardize_dtype(dtype)
    except TypeError as error:
        raise TypeError(f"zero_states: {error}") from None
    return [wrap(call_primitive(_batch_zeros, value, int(size), dtype)) for size in sizes]

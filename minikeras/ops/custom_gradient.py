"""`custom_gradient`: a function whose gradient the user writes, as Keras's decorator.

The decorated function `f(*args)` returns `(output, grad_fn)`. A call becomes one
fused primitive (`engine.primitive`): its forward runs `f` on the plain values of
the arguments and keeps `grad_fn` as the residuals; its VJP calls `grad_fn` with
the output's gradient. When the forward did not run on plain values (a gradient of
a gradient, or autograd's own `grad`), the VJP runs `f` again on the arguments as
they came, outer tapes' boxes included, so that those tapes record what `grad_fn`
computes: its result is then differentiable too, through the ops it is written in.

An output of several tensors is one node holding their tuple (autograd's container
boxes take it apart), so `grad_fn` is called once, with every output's gradient.
"""

import inspect

import numpy as np

from minikeras import tree
from minikeras.engine.primitive import call_primitive, defvjp_fused, fused_primitive
from minikeras.engine.tensor import Tensor, getval, isbox, value_of, wrap

__all__ = ["custom_gradient"]


def custom_gradient(f):
    """Decorator to define a function with a custom gradient.

    `f(*args)` returns `(output, grad_fn)`; the decorated function returns
    `output`, and its gradient with respect to `args` is what `grad_fn`
    returns. Write `grad_fn` as Keras documents for every backend:

        def grad_fn(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            ...

    minikeras calls `grad_fn(upstream)` (JAX's and TensorFlow's form), unless
    `grad_fn` has a keyword-only parameter `upstream` without a default
    (PyTorch's `def grad_fn(*args, upstream)`), which it calls as
    `grad_fn(*args, upstream=upstream)` with the function's arguments.
    `upstream` is the output's gradient, a Tensor (a tuple of them for an
    output of several tensors, each zero where no gradient reached it).

    Gradients flow to the (nested structures of) tensors in `args` only; pass
    a layer's weights as arguments to train them. `f` reading a Variable the
    tape watches is an error (JAX refuses closed-over values likewise).
    Keyword arguments are passed to `f` as constants. Each gradient is cast to
    its argument's floating dtype, so float32 stays float32; a None gradient
    means zeros. Gradients of gradients differentiate what `grad_fn` computes.

    Args:
        f: function `f(*args, **kwargs)` returning `(output, grad_fn)`, where
            `output` is a tensor or a flat tuple/list of tensors and
            `grad_fn(upstream)` returns one gradient per tensor in the
            flattened `args` (a single tensor if there is one).

    Returns:
        A function `h(*args, **kwargs)` returning `f(*args, **kwargs)[0]`,
        whose gradient is given by `grad_fn`.

    Raises:
        TypeError: (when `h` is called) if `f` does not return a pair, or its
            output is not tensors, or `f` read a Variable the tape watches.
        ValueError: (in the backward pass) if `grad_fn` returns the wrong number
            of gradients or one of the wrong shape.

    Example:
        >>> @mk.ops.custom_gradient
        ... def log1pexp(x):
        ...     e = mk.ops.exp(x)
        ...
        ...     def grad(*args, upstream=None):
        ...         if upstream is None:
        ...             (upstream,) = args
        ...         return mk.ops.multiply(upstream, 1.0 - 1.0 / mk.ops.add(1, e))
        ...
        ...     return mk.ops.log(1 + e), grad
        >>> x = mk.Variable([0.0, 20.0])
        >>> with mk.GradientTape() as tape:
        ...     y = log1pexp(x)
        >>> tape.gradient(y, x).numpy()
        array([0.5, 1. ], dtype=float32)
    """
    name = getattr(f, "__name__", "custom_gradient")

    def decorated(*args, **kwargs):
        leaves = [
            value_of(leaf) if isinstance(leaf, Tensor) else leaf for leaf in tree.flatten(args)
        ]
        call = _Call(f, name, args, kwargs)
        if not any(isbox(leaf) for leaf in leaves):  # nothing records: f itself, no node
            output = call.forward(leaves)[0]
        else:
            output = call_primitive(_custom, call, *leaves)
        return call.pack(output)

    decorated.__name__ = name
    decorated.__qualname__ = getattr(f, "__qualname__", name)
    decorated.__doc__ = f.__doc__
    decorated.__wrapped__ = f
    return decorated


class _Call:
    """One call of a decorated function: `f`, its arguments' structure, its output's."""

    __slots__ = ("f", "name", "args", "kwargs", "several")

    def __init__(self, f, name, args, kwargs):
        self.f, self.name, self.args, self.kwargs = f, name, args, kwargs
        self.several = None  # whether the output is a tuple of tensors (known once f ran)

    def forward(self, leaves):
        """Runs `f` on `leaves` (values); returns (output value or tuple of them, grad_fn)."""
        inputs = tree.pack_sequence_as(self.args, [_as_input(leaf) for leaf in leaves])
        returned = self.f(*inputs, **self.kwargs)
        if (
            not isinstance(returned, (tuple, list))
            or len(returned) != 2
            or not callable(returned[1])
        ):
            raise TypeError(
                f"custom_gradient: {self.name} must return a pair (output, grad_fn), "
                f"got {type(returned).__name__}"
            )
        output, grad_fn = returned
        self.several = isinstance(output, (tuple, list))
        parts = list(output) if self.several else [output]
        values = []
        for part in parts:
            value = value_of(part) if isinstance(part, (Tensor, np.ndarray, float, int)) else None
            if value is None:
                raise TypeError(
                    f"custom_gradient: {self.name} must return a tensor or a tuple of tensors "
                    f"as its output, got {type(part).__name__} (it runs on tensors with values: "
                    "on functional-API placeholders, call it inside a Layer's call)"
                )
            values.append(value)
        return (tuple(values) if self.several else values[0]), grad_fn

    def pack(self, output):
        if self.several:
            return tuple(wrap(output[i]) for i in range(len(output)))
        return wrap(output)


def _as_input(leaf):
    return wrap(leaf) if isinstance(leaf, np.ndarray) or isbox(leaf) else leaf


@fused_primitive
def _custom(call, *leaves):
    output, grad_fn = call.forward(leaves)
    for value in output if call.several else (output,):
        if isbox(value):
            raise TypeError(
                f"custom_gradient: {call.name} read a Variable (or a tensor) the tape "
                "watches without taking it as an argument; pass it to the function so "
                "that grad_fn gives its gradient"
            )
    return output, grad_fn


def _custom_vjp(argnums, ans, args, grad_fn):
    call, leaves = args[0], args[1:]

    def vjp(g):
        fn = grad_fn if grad_fn is not None else call.forward(leaves)[1]
        if call.several:
            upstream = tuple(wrap(_zeros_if_none(part, out)) for part, out in zip(g, ans))
        else:
            upstream = wrap(g)
        grads = _call_grad_fn(fn, call, leaves, upstream)
        grads = tree.flatten(list(grads)) if isinstance(grads, (tuple, list)) else [grads]
        if len(grads) != len(leaves):
            raise ValueError(
                f"custom_gradient: the grad_fn of {call.name} returned {len(grads)} "
                f"gradient(s) for {len(leaves)} argument tensor(s)"
            )
        return [_gradient_for(call, grads[i - 1], leaves[i - 1], i - 1) for i in argnums]

    return vjp


defvjp_fused(_custom, _custom_vjp)


def _call_grad_fn(fn, call, leaves, upstream):
    """Keras's portable call: `fn(upstream)`, or PyTorch's `fn(*args, upstream=...)`."""
    try:
        parameter = inspect.signature(fn).parameters.get("upstream")
    except (TypeError, ValueError):
        parameter = None
    if (
        parameter is not None
        and parameter.kind is inspect.Parameter.KEYWORD_ONLY
        and parameter.default is inspect.Parameter.empty
    ):
        inputs = tree.pack_sequence_as(call.args, [_as_input(leaf) for leaf in leaves])
        return fn(*inputs, upstream=upstream)
    return fn(upstream)


def _zeros_if_none(part, out):
    """An output's gradient; zeros of its shape if none reached it."""
    if part is None:
        return np.zeros(np.shape(out), dtype=getattr(out, "dtype", None))
    return part


def _gradient_for(call, grad, leaf, index):
    """One argument's gradient, as a value of its shape and (floating) dtype."""
    value = getval(leaf)
    shape, dtype = np.shape(value), getattr(value, "dtype", None)
    if grad is None:
        return np.zeros(shape, dtype=dtype if dtype is not None and dtype.kind in "fc" else None)
    grad = value_of(grad)
    if np.shape(getval(grad)) != shape:
        raise ValueError(
            f"custom_gradient: the grad_fn of {call.name} gave argument {index} a gradient "
            f"of shape {np.shape(getval(grad))}, but the argument has shape {shape}"
        )
    grad_dtype = getattr(getval(grad), "dtype", None)
    if dtype is not None and dtype.kind == "f" and grad_dtype != dtype:
        grad = grad.astype(dtype) if hasattr(grad, "astype") else np.asarray(grad, dtype)
    return grad

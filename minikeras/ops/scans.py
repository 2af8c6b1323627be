"""Functions mapped or scanned over a leading axis: map, scan, associative_scan,
vectorized_map and vectorize, as Keras's ops.

Eager Python loops over slices, joined with `stack`: the function sees Tensors
and runs ordinary minikeras code, so under a `GradientTape` gradients flow
through every step. `associative_scan` takes about log2(n) calls of its
function (each on whole slices), not n. With nothing to call the function on
(a leading axis of length 0), it is called once on zeros, its result used only
for the shapes and dtypes of an empty result, as a compiled backend's trace.
"""

import re

import numpy as np

from minikeras import tree
from minikeras.ops.axes import broadcast_to
from minikeras.ops.core import Tensor, getval, shape_of, value_of, wrap
from minikeras.ops.creation import convert_to_tensor, zeros
from minikeras.ops.gather import flip
from minikeras.ops.operands import narrowed_operands
from minikeras.ops.shape import concatenate, getitem, reshape, stack

__all__ = ["associative_scan", "map", "scan", "vectorize", "vectorized_map"]


def map(f, xs):  # noqa: A001 (Keras's name)
    """Applies `f` to each slice of `xs` along its first axis, stacking the results.

    Args:
        f: callable of one slice (a structure like `xs`), returning a tensor
            or a nested structure of them.
        xs: a tensor or a nested structure of tensors of one leading size.

    Returns:
        `f`'s results stacked along a new first axis, in `f`'s structure.

    Raises:
        ValueError: if the leaves of `xs` differ in leading size.

    Example:
        >>> mk.ops.map(lambda x: x * x, mk.ops.arange(4)).numpy().tolist()
        [0, 1, 4, 9]
    """
    return scan(lambda carry, x: ((), f(x)), (), xs)[1]


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Runs `carry, y = f(carry, x)` over the slices of `xs`, stacking the `y`s.

    Args:
        f: callable of `(carry, x)` returning `(new carry, y)`; `x` is a slice
            of `xs` (a structure like it), or None without `xs`.
        init: the first carry: a tensor or a nested structure of them.
        xs: optional tensor or nested structure of them to scan along axis 0.
        length: the number of steps; defaults to the leading size of `xs`.
        reverse: run from the last slice to the first (the `y`s stay in the
            order of `xs`).
        unroll: accepted for Keras's signature (a positive int or a bool);
            eager loops have nothing to unroll.

    Returns:
        The pair `(final carry, stacked ys)`; the stacked ys are None when `f`
        returns None for `y`.

    Raises:
        ValueError: if neither `xs` nor `length` is given, `length` disagrees
            with `xs`, or `unroll` is not a positive int or a bool.
        TypeError: if `f` is not callable.

    Example:
        >>> carry, ys = mk.ops.scan(lambda c, x: (c + x, c + x), 0, mk.ops.arange(1, 6))
        >>> int(carry), ys.numpy().tolist()
        (15, [1, 3, 6, 10, 15])
    """
    if not callable(f):
        raise TypeError(f"scan: f must be callable, got {f!r}")
    if not isinstance(unroll, bool) and (not isinstance(unroll, int) or unroll < 1):
        raise ValueError(f"scan: unroll must be a positive int or a bool, got {unroll!r}")
    if xs is None and length is None:
        raise ValueError("scan: give xs to scan over, or the number of steps as length")
    # Read together (`ops.operands`): numpy float64 xs beside a float32 Tensor carry (or
    # the other way) take its precision, rather than making every step float64.
    init_flat = tree.flatten(init)
    leaves = narrowed_operands(*init_flat, *([] if xs is None else tree.flatten(xs)))
    init = tree.pack_sequence_as(init, list(leaves[: len(init_flat)]))
    xs_flat = [convert_to_tensor(x) for x in leaves[len(init_flat) :]]
    steps = _leading_size("scan", xs_flat) if xs_flat else int(length)
    if length is not None and xs_flat and int(length) != steps:
        raise ValueError(f"scan: length={length} but xs has leading size {steps}")
    carry = tree.map_structure(_tensor_or_none, init)

    def step_input(i):
        return None if xs is None else tree.pack_sequence_as(xs, [getitem(x, i) for x in xs_flat])

    if steps == 0:
        sample = _step_input_zeros(xs, xs_flat)
        return carry, _empty_stack(lambda: f(carry, sample)[1])
    ys = []
    for i in reversed(range(steps)) if reverse else range(steps):
        carry, y = f(carry, step_input(i))
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, _stack_structures(ys)


def associative_scan(f, elems, reverse=False, axis=0):
    """The running combination of `elems` along `axis` by an associative `f`.

    For `elems = [a, b, c, ...]` along `axis`, the result is
    `[a, f(a, b), f(f(a, b), c), ...]`; with `reverse`, the same from the end.
    `f` must be associative (`f(a, f(b, c)) == f(f(a, b), c)`) and apply
    element-wise along `axis`: it is called about log2(n) times on whole
    slices (Hillis and Steele's scan), its earlier operand first.

    Args:
        f: callable of two structures like `elems` (slices along `axis`),
            returning one like them.
        elems: a tensor or nested structure of tensors of one size along `axis`.
        reverse: scan from the end of `axis`.
        axis: the axis to scan along.

    Returns:
        A structure like `elems`, of the same shapes.

    Raises:
        ValueError: if the leaves differ in size along `axis`.
        TypeError: if `f` is not callable.

    Example:
        >>> mk.ops.associative_scan(lambda a, b: a + b, mk.ops.arange(5)).numpy().tolist()
        [0, 1, 3, 6, 10]
    """
    if not callable(f):
        raise TypeError(f"associative_scan: f must be callable, got {f!r}")
    flat = [convert_to_tensor(x) for x in tree.flatten(elems)]
    axis = axis % max(len(shape_of(flat[0])), 1)
    sizes = {shape_of(x)[axis] for x in flat}
    if len(sizes) != 1:
        raise ValueError(
            f"associative_scan: every input needs one size along axis {axis}, "
            f"got shapes {[shape_of(x) for x in flat]}"
        )
    (size,) = sizes
    if reverse:
        flat = [flip(x, axis=axis) for x in flat]

    def part(x, start, stop):
        index = (slice(None),) * axis + (slice(start, stop),)
        return getitem(x, index)

    offset = 1
    while offset < size:
        earlier = tree.pack_sequence_as(elems, [part(x, 0, size - offset) for x in flat])
        later = tree.pack_sequence_as(elems, [part(x, offset, None) for x in flat])
        combined = tree.flatten(f(earlier, later))
        flat = [concatenate([part(x, 0, offset), new], axis=axis) for x, new in zip(flat, combined)]
        offset *= 2
    if reverse:
        flat = [flip(x, axis=axis) for x in flat]
    return tree.pack_sequence_as(elems, flat)


def vectorized_map(function, elements):
    """Applies `function` to each slice of `elements` along axis 0, stacking the results.

    As `map` (eagerly one call per slice). A list or tuple of tensors gives
    `function` a list of their slices, as Keras's documented loop does.

    Args:
        function: callable of one slice of `elements`.
        elements: a tensor, or a nested structure of them of one leading size.

    Returns:
        `function`'s results stacked along a new first axis.

    Raises:
        ValueError: if the leaves differ in leading size.

    Example:
        >>> x = mk.ops.convert_to_tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> mk.ops.vectorized_map(lambda row: mk.ops.sum(row), x).numpy()
        array([3., 7.], dtype=float32)
    """
    if isinstance(elements, (list, tuple)):
        return map(lambda items: function(list(items)), tuple(elements))
    return map(function, elements)


def vectorize(pyfunc, *, excluded=None, signature=None):
    """Makes a function of scalars (or of core shapes) apply across broadcast inputs.

    As `numpy.vectorize`: the positional inputs are broadcast over their
    leading (loop) axes and `pyfunc` is called once per loop position, its
    results stacked back. Eagerly that is one Python call per position.
    Keyword arguments are passed to `pyfunc` unchanged (numpy would vectorize
    them too).

    Args:
        pyfunc: the function to vectorize; it receives Tensors.
        excluded: optional set of positional indices passed through unchanged.
        signature: optional generalized ufunc signature such as
            `"(m,n),(n)->(m)"`; by default inputs and output are scalars.
            Several outputs (`"(n)->(),()"`) return a tuple.

    Returns:
        The vectorized function.

    Raises:
        ValueError: if `pyfunc` is not callable or `signature` is malformed;
            when called, if the inputs lack the core axes or do not broadcast.

    Example:
        >>> add = mk.ops.vectorize(lambda a, b: a + b)
        >>> add(mk.ops.convert_to_tensor([1, 2, 3, 4]), 2).numpy()
        array([3, 4, 5, 6], dtype=int32)
    """
    if not callable(pyfunc):
        raise ValueError(f"vectorize: pyfunc must be callable, got {pyfunc!r}")
    excluded = set(excluded or ())
    inputs_core, outputs_core = _parse_signature(signature)

    def vectorized(*args, **kwargs):
        positions = [i for i in range(len(args)) if i not in excluded]
        cores = inputs_core or [()] * len(positions)
        if len(cores) != len(positions):
            raise ValueError(
                f"vectorize: the signature {signature!r} has {len(cores)} input(s), "
                f"got {len(positions)} vectorized argument(s)"
            )
        tensors = [convert_to_tensor(args[i]) for i in positions]
        loops = []
        for tensor, core in zip(tensors, cores):
            shape = shape_of(tensor)
            if len(shape) < len(core):
                raise ValueError(
                    f"vectorize: an input of shape {shape} lacks the core axes {core} "
                    f"of the signature {signature!r}"
                )
            loops.append(shape[: len(shape) - len(core)])
        try:
            loop_shape = np.broadcast_shapes(*loops)
        except ValueError:
            raise ValueError(
                f"vectorize: the inputs' loop shapes {loops} do not broadcast"
            ) from None
        count = int(np.prod(loop_shape))
        flat_inputs = []
        for tensor, loop in zip(tensors, loops):
            core_shape = shape_of(tensor)[len(loop) :]
            full = broadcast_to(tensor, loop_shape + core_shape)
            flat_inputs.append(reshape(full, (count, *core_shape)))

        def call(items):
            call_args = list(args)
            for i, item in zip(positions, items):
                call_args[i] = item
            return pyfunc(*call_args, **kwargs)

        stacked = map(call, tuple(flat_inputs))
        several = isinstance(stacked, (tuple, list))
        results = [reshape(y, loop_shape + shape_of(y)[1:]) for y in tree.flatten(stacked)]
        if outputs_core is not None and len(outputs_core) != len(results):
            raise ValueError(
                f"vectorize: the signature {signature!r} has {len(outputs_core)} output(s), "
                f"pyfunc returned {len(results)}"
            )
        return tuple(results) if several else results[0]

    return vectorized


_CORE = r"\((?:\w+(?:,\s*\w+)*)?\)"
_SIGNATURE = re.compile(rf"^\s*({_CORE}(?:,\s*{_CORE})*)\s*->\s*({_CORE}(?:,\s*{_CORE})*)\s*$")


def _parse_signature(signature):
    """`"(m,n),(n)->(m)"` as `([("m", "n"), ("n",)], [("m",)])`; `(None, None)` if None."""
    if signature is None:
        return None, None
    match = _SIGNATURE.match(signature) if isinstance(signature, str) else None
    if match is None:
        raise ValueError(f"vectorize: signature must look like '(m,n),(n)->(m)', got {signature!r}")

    def cores(text):
        return [
            tuple(name for name in core.split(",") if name.strip())
            for core in re.findall(r"\(([^)]*)\)", text)
        ]

    return cores(match.group(1)), cores(match.group(2))


def _tensor_or_none(leaf):
    return leaf if leaf is None or isinstance(leaf, Tensor) else convert_to_tensor(leaf)


def _leading_size(op, flat):
    sizes = {shape_of(x)[0] if shape_of(x) else None for x in flat}
    if None in sizes or len(sizes) != 1:
        raise ValueError(
            f"{op}: every input needs one leading size, got shapes {[shape_of(x) for x in flat]}"
        )
    return sizes.pop()


def _step_input_zeros(xs, xs_flat):
    """A slice of zeros like one step's input, for learning an empty result's shapes."""
    if xs is None:
        return None
    return tree.pack_sequence_as(
        xs, [zeros(shape_of(x)[1:], dtype=value_of(x).dtype) for x in xs_flat]
    )


def _stack_structures(ys):
    """The `y`s of every step, stacked leaf by leaf (None if the steps gave None)."""
    if all(y is None for y in ys):
        return None
    flats = [tree.flatten(y) for y in ys]
    return tree.pack_sequence_as(ys[0], [stack(list(leaves)) for leaves in zip(*flats)])


def _empty_stack(output_of):
    """Zero-length stacked outputs with the shapes and dtypes `output_of()` gives."""
    sample = output_of()
    if sample is None:
        return None
    return tree.map_structure(
        lambda y: wrap(np.zeros((0, *shape_of(y)), dtype=np.asarray(getval(value_of(y))).dtype)),
        sample,
    )

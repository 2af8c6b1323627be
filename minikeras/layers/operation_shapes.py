"""The shapes of an op node's outputs, traced on placeholder data as Keras's rules give them.

An op on symbolic tensors (`layers.operation_node`) learns its outputs'
shapes and dtypes by running the op on placeholder arrays of the inputs'
shapes, unknown sizes filled in (`layers.symbolic.traced_spec`): a size that
varies with the placeholder sizes is unknown. Where the usual placeholders
fail (an unknown size meeting a known one, a singular matrix), other sizes
and invertible placeholders are tried, in the order Keras's shape rules
allow.

A call with an integer constant `c` above 1 (an index 90, an offset 100, a
frame of 100 samples, a stride 4) is also traced on placeholder sizes spread
past it, which exceed `c` and differ by more than `c`: on the usual ones
(2 and 3 for the batch, 83 and 89 for other axes) a size may clip to 0, or
count to the same number of steps, at both (`diagonal` with offset -100 of
the batch axis, `x[::4]`), which would pass for known, or the call may not
run at all (`take_along_axis` with index 90). The usual sizes run first;
where they run, the spread ones run next only if the outputs they would make
stay small (not `one_hot(x, 5000)` of a batch spread past 5000), and give
the shapes; where they fail, the spread ones are tried before other sizes.
"""

import numpy as np

from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.symbolic import traced_spec
from minikeras.tree import flatten, map_structure

__all__ = ["output_specs", "trace"]


def output_specs(call, function_name, args, kwargs, options=None):
    """The output specs (shape and dtype) of `call(*args, **kwargs)` on symbolic tensors.

    Args:
        call: the op node's call.
        function_name: the op's name, for errors.
        args: its positional arguments (symbolic tensors among them).
        kwargs: its keyword arguments.
        options: the options the op's node holds and `call` adds (an offset, a
            stride), read for their constants only.

    Returns:
        A structure of specs with `shape` and `dtype`, as the call's outputs.

    Raises:
        ValueError, TypeError, IndexError: what the op raised on the first
            placeholders, when no placeholders run, naming the shapes.

    Example:
        >>> from minikeras.layers.operation_shapes import output_specs
        >>> output_specs(mk.ops.add, "add", (mk.Input((3,)), np.ones(3)), {}).shape
        (None, 3)
    """
    spread = _spread_sizes((args, options), kwargs)
    specs, first_error = _tried(call, args, kwargs, None, False)  # (the error named)
    if specs is not None:
        # The usual sizes ran: the spread ones tell more (a size they clip or step through
        # passes for known on the usual ones), where their outputs stay small.
        if spread is not None and _spread_elements(specs, spread) <= _MOST_SPREAD_ELEMENTS:
            spread_specs = _traced_spread(call, args, kwargs, spread)
            specs = specs if spread_specs is None else spread_specs
        return specs
    if spread is not None:  # (the usual sizes failed: spread ones next)
        specs = _traced_spread(call, args, kwargs, spread)
    if specs is None:
        # Then other sizes; last, matrices the linear-algebra ops can factor (ones are
        # singular).
        tries = [*((sizes, False) for sizes in _other_sizes(args, kwargs)), (None, True)]
        for sizes, invertible in tries:
            specs, _ = _tried(call, args, kwargs, sizes, invertible)
            if specs is not None:
                break
    if specs is None:
        shapes = [t.shape for t in flatten((args, kwargs)) if isinstance(t, SymbolicTensor)]
        raise type(first_error)(
            f"ops.{function_name} on symbolic tensors of shapes "
            f"{', '.join(map(str, shapes))}: {first_error} (run on placeholder data, where "
            "sizes such as 2 and 83 stand for the unknown ones)"
        ) from first_error
    return specs


def trace(call, args, kwargs, sizes=None, invertible=False):
    """The output specs of `call` run once on placeholders (see the module).

    Args:
        call: the op node's call.
        args: its positional arguments.
        kwargs: its keyword arguments.
        sizes: the placeholder sizes to stand for unknown ones (None: the usual).
        invertible: add 3 I to square placeholders (for `inv`, `cholesky`...).

    Returns:
        A structure of specs.

    Raises:
        ValueError, TypeError, IndexError: what `call` raised on the placeholders.

    Example:
        >>> from minikeras.layers.operation_shapes import trace
        >>> trace(mk.ops.sum, (mk.Input((3,)),), {"axis": -1}).shape
        (None,)
    """

    def run(arguments):
        if invertible:  # placeholders of ones + 3 I: positive definite where ones are singular
            arguments = map_structure(_invertible, arguments)
        with np.errstate(all="ignore"):  # (placeholder ones may still meet a log(0))
            return call(*arguments[0], **arguments[1])

    specs = traced_spec(run, (args, kwargs), fill=lambda leaf: 1, sizes=sizes)
    return _unknown_at_size_one(run, (args, kwargs), specs)


def _invertible(leaf):
    """A placeholder array plus 3 I in its last two axes, if square (`ops.inv`, `cholesky`)."""
    if type(leaf) is np.ndarray and leaf.ndim >= 2 and leaf.shape[-1] == leaf.shape[-2]:
        return leaf + 3 * np.eye(leaf.shape[-1], dtype=leaf.dtype)
    return leaf


def _other_sizes(args, kwargs):
    """Placeholder sizes to try when the usual ones fail, as Keras's shape rules allow.

    An unknown size meets a known one in broadcasting (`(None,) + (4,)`), a
    product (`(None,) @ (5, 4)`), a `reshape(-1, 6)` or a `split`, where
    Keras infers the output's shape: unknown sizes of 1; sizes that divide
    evenly; each known size the arguments have. The first that runs gives the
    shapes (a size that varies with the batch is unknown, as always).
    """
    known = sorted(
        {
            size
            for leaf in flatten((args, kwargs))
            for size in (np.shape(leaf) if not isinstance(leaf, SymbolicTensor) else leaf.shape)
            if isinstance(size, int) and size > 1
        }
    )
    return [((2, 3), (1, 1)), ((12, 24), (60, 120))] + [((2, 3), (k, k)) for k in known]


# The usual placeholder sizes of an unknown batch and other axis (layers.symbolic's), and
# how many elements spread placeholders may hold in all (beyond, the usual sizes only).
_USUAL_SIZES = ((2, 3), (83, 89))
_MOST_SPREAD_ELEMENTS = 2**24


def _largest_constant(args, kwargs):
    """The largest integer among the call's constants: ints, integer arrays' values, slices'
    bounds and arrays' sizes (a kernel of 100 taps); 0 if none."""
    largest = 0
    for leaf in flatten((args, kwargs)):
        if isinstance(leaf, (SymbolicTensor, bool, np.bool_)):
            continue
        if isinstance(leaf, slice):
            bounds = [b for b in (leaf.start, leaf.stop, leaf.step) if isinstance(b, int)]
            largest = max([largest, *map(abs, bounds)])
        elif isinstance(leaf, (int, np.integer)):
            largest = max(largest, abs(int(leaf)))
        elif isinstance(leaf, np.ndarray) or hasattr(leaf, "numpy"):
            value = np.asarray(leaf)
            largest = max([largest, *value.shape])
            if value.dtype.kind in "iu" and value.size:
                largest = max(largest, int(np.max(np.abs(value.astype(np.int64)))))
    return largest


def _spread_sizes(args, kwargs):
    """Placeholder sizes spread past the call's largest integer constant `c` (see the
    module), or None if `c` is within the usual sizes' gap or they would be too large.

    The two sizes of each unknown axis exceed `c` and differ by more than it, so that a
    size clipped by `c` (`n - c`), or counted in steps of it (`(n - c) // c`), differs.
    """
    constant = _largest_constant(args, kwargs)
    (batch_one, batch_two), (axis_one, _) = _USUAL_SIZES
    if constant <= batch_two - batch_one:  # (the usual sizes differ by 1 at least)
        return None
    batch_one, axis_one = batch_one + constant, axis_one + constant  # (room past an index c)
    sizes = ((batch_one, batch_one + constant + 1), (axis_one, axis_one + constant + 1))
    elements = 0
    for leaf in flatten((args, kwargs)):
        if isinstance(leaf, SymbolicTensor):
            placeholders = [sizes[0][1]] + [sizes[1][1]] * (len(leaf.shape) - 1)
            shape = [p if s is None else s for p, s in zip(placeholders, leaf.shape)]
            elements += int(np.prod(shape, dtype=np.float64))
    return sizes if elements <= _MOST_SPREAD_ELEMENTS else None


def _tried(call, args, kwargs, sizes, invertible):
    """`(specs, None)` traced on `sizes`, or `(None, error)` for what the op raised there."""
    try:
        return trace(call, args, kwargs, sizes, invertible), None
    except (ValueError, TypeError, IndexError) as error:
        if type(error) not in (ValueError, TypeError, IndexError):
            raise  # (a subclass may take other arguments: left as it is)
        return None, error


def _traced_spread(call, args, kwargs, sizes):
    """The output specs traced on spread placeholder `sizes`, or None where they do not run."""
    try:
        return trace(call, args, kwargs, sizes)
    except (ValueError, TypeError, IndexError, MemoryError):
        return None


def _spread_elements(specs, sizes):
    """How many elements the outputs `specs` (traced on the usual sizes) would hold on the
    spread `sizes`: an unknown size counted as the larger spread size of the batch axis."""
    largest = max(sizes[0][1], sizes[1][1])
    return sum(
        np.prod([largest if size is None else size for size in spec.shape], dtype=np.float64)
        for spec in flatten(specs)
    )


def _unknown_at_size_one(run, arguments, specs):
    """`specs` with each size made unknown that changes when every unknown input size is 1.

    The traced runs use large sizes, for which `x[:, :2]` of an unknown axis is 2
    every time; the real size may be 1. Keras leaves such a size unknown; so does
    this third run. A run that fails at size 1, or changes ranks, teaches nothing.
    """
    leaves = [leaf for leaf in flatten(arguments) if isinstance(leaf, SymbolicTensor)]
    if not any(size is None for leaf in leaves for size in leaf.shape):
        return specs

    def ones(leaf):
        if not isinstance(leaf, SymbolicTensor):
            return leaf
        return np.ones(tuple(1 if size is None else size for size in leaf.shape), leaf.dtype)

    try:
        small = flatten(run(map_structure(ones, arguments)))
    except (ValueError, TypeError, IndexError):
        return specs
    found = flatten(specs)
    if len(small) != len(found) or any(len(a.shape) != b.ndim for a, b in zip(small, found)):
        return specs
    for spec, output in zip(found, small):
        spec.shape = tuple(
            None if size is None or size != other else size
            for size, other in zip(spec.shape, output.shape)
        )
    return specs

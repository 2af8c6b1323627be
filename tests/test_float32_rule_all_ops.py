"""The float32 rule over every op of several tensor operands (docs/engine.md).

A numpy float64 array given to an op beside a float32 Tensor is a constant of
the Tensor's precision: no result may be float64. Each op of `mk.ops.__all__`
is classified here: a case (its tensor operands' shapes and a call), one
tensor operand only, or excluded with a reason. Each case runs with the
numpy float64 array in each tensor position and float32 Tensors in the
others, then the other way round (one float32 Tensor among numpy arrays:
`dense(array, array, bias=tensor)`).
"""

import numpy as np
import pytest
from finite_differences import check_float32

import minikeras as mk

ops = mk.ops
EYE = 3.0 * np.eye(2)
BOOLS = [np.array([True, False, True]), np.array([False, True, False])]


def _names(text):
    """The names in a whitespace-separated string."""
    return text.split()


def _binary(name, shape=(3,)):
    return [shape, shape], lambda a, b: getattr(ops, name)(a, b)


# name: ([shape of each tensor operand], call taking the operands in that order).
# Operands are positive (in [0.5, 1.5)); a call may scale one, which keeps its kind.
CASES = {
    name: _binary(name)
    for name in _names(
        "add subtract multiply divide true_divide floor_divide mod power maximum minimum "
        "arctan2 hypot logaddexp logaddexp2 divide_no_nan fmod fmax fmin heaviside nextafter "
        "inner outer kron vdot append cross equal not_equal greater greater_equal less "
        "less_equal isclose allclose isin logical_and logical_or logical_xor "
        "searchsorted"
    )
}
CASES.update(
    {
        "matmul": ([(2, 3), (3, 2)], ops.matmul),
        "dot": ([(2, 3), (3, 2)], ops.dot),
        "tensordot": ([(2, 3), (3, 2)], lambda a, b: ops.tensordot(a, b, axes=1)),
        "einsum": ([(2, 3), (3, 2)], lambda a, b: ops.einsum("ij,jk->ik", a, b)),
        "cdist": ([(2, 3), (2, 3)], ops.cdist),
        "correlate": ([(5,), (3,)], ops.correlate),
        "binary_crossentropy": (
            [(3,), (3,)],
            lambda a, b: ops.binary_crossentropy(a * 0.5, b * 0.5),
        ),
        "categorical_crossentropy": ([(2, 3), (2, 3)], ops.categorical_crossentropy),
        "clip": ([(3,), (3,), (3,)], lambda x, lo, hi: ops.clip(x, lo * 0.1, hi + 1.0)),
        "dense": ([(2, 3), (3, 2), (2,)], lambda x, k, b: ops.dense(x, k, b)),
        "conv": ([(1, 5, 2), (3, 2, 4)], ops.conv),
        "conv_transpose": ([(1, 5, 2), (3, 4, 2)], ops.conv_transpose),
        "depthwise_conv": ([(1, 5, 2), (3, 2, 1)], ops.depthwise_conv),
        "separable_conv": ([(1, 5, 2), (3, 2, 1), (1, 2, 3)], ops.separable_conv),
        "concatenate": ([(3,), (3,)], lambda a, b: ops.concatenate([a, b])),
        "stack": ([(3,), (3,)], lambda a, b: ops.stack([a, b])),
        "hstack": ([(3,), (3,)], lambda a, b: ops.hstack([a, b])),
        "vstack": ([(3,), (3,)], lambda a, b: ops.vstack([a, b])),
        "dstack": ([(3,), (3,)], lambda a, b: ops.dstack([a, b])),
        "where": ([(3,), (3,)], lambda a, b: ops.where(BOOLS[0], a, b)),
        "select": ([(3,), (3,)], lambda a, b: ops.select(BOOLS, [a, b])),
        "meshgrid": ([(3,), (2,)], ops.meshgrid),
        "linspace": ([(2,), (2,)], lambda a, b: ops.linspace(a, b + 1.0, num=3)),
        "logspace": ([(2,), (2,)], lambda a, b: ops.logspace(a, b + 1.0, num=3)),
        "geomspace": ([(2,), (2,)], lambda a, b: ops.geomspace(a, b + 1.0, num=3)),
        "digitize": ([(3,), (3,)], lambda x, b: ops.digitize(x, b + np.array([0.0, 2.0, 4.0]))),
        "trapezoid": ([(3,), (3,)], ops.trapezoid),
        "average": ([(3,), (3,)], lambda x, w: ops.average(x, weights=w)),
        "quantile": ([(5,), (2,)], lambda x, q: ops.quantile(x, q * 0.5)),
        "nanquantile": ([(5,), (2,)], lambda x, q: ops.nanquantile(x, q * 0.5)),
        "percentile": ([(5,), (2,)], lambda x, q: ops.percentile(x, q * 50.0)),
        "nanpercentile": ([(5,), (2,)], lambda x, q: ops.nanpercentile(x, q * 50.0)),
        "scatter_update": (
            [(4,), (1,)],
            lambda x, u: ops.scatter_update(x, np.array([[1]]), u),
        ),
        "slice_update": ([(4,), (2,)], lambda x, u: ops.slice_update(x, (1,), u)),
        "threshold": ([(3,), (3,)], lambda x, d: ops.threshold(x, 0.8, d)),
        "batch_normalization": (
            [(2, 3), (3,), (3,), (3,), (3,)],
            lambda x, m, v, o, s: ops.batch_normalization(x, m, v, -1, offset=o, scale=s),
        ),
        "layer_normalization": ([(2, 3), (3,), (3,)], ops.layer_normalization),
        "rms_normalization": ([(2, 3), (3,)], ops.rms_normalization),
        "psnr": ([(3,), (3,)], lambda a, b: ops.psnr(a, b, 1.0)),
        "dot_product_attention": (
            [(1, 2, 1, 4), (1, 2, 1, 4), (1, 2, 1, 4), (1, 1, 2, 2)],
            lambda q, k, v, bias: ops.dot_product_attention(q, k, v, bias=bias),
        ),
        "gru": ([(1, 2, 3), (3, 6), (2, 6), (2, 6)], ops.gru),
        "lstm": ([(1, 2, 3), (3, 8), (2, 8), (8,)], ops.lstm),
        "simple_rnn": ([(1, 2, 3), (3, 2), (2, 2), (2,)], ops.simple_rnn),
        "solve": ([(2, 2), (2, 1)], lambda a, b: ops.solve(a + EYE, b)),
        "solve_triangular": ([(2, 2), (2, 1)], lambda a, b: ops.solve_triangular(a + EYE, b)),
        "lstsq": ([(3, 2), (3, 1)], ops.lstsq),
        "polar": ([(3,), (3,)], ops.polar),
        "fft": ([(4,), (4,)], lambda r, i: ops.fft((r, i))),
        "fft2": ([(2, 4), (2, 4)], lambda r, i: ops.fft2((r, i))),
        "ifft2": ([(2, 4), (2, 4)], lambda r, i: ops.ifft2((r, i))),
        "irfft": ([(3,), (3,)], lambda r, i: ops.irfft((r, i))),
        "stft": ([(16,), (8,)], lambda x, w: ops.stft(x, 8, 4, 8, window=w)),
        "istft": ([(3, 5), (3, 5), (8,)], lambda r, i, w: ops.istft((r, i), 8, 4, 8, window=w)),
        "scan": (
            [(3,), (2, 3)],
            lambda init, xs: ops.scan(lambda c, x: (c + x, c * x), init, xs),
        ),
    }
)

# Ops of several operands whose other operands are not float tensors, or that
# take values only through a function they call.
EXCLUDED = {
    **dict.fromkeys(
        _names(
            "bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift "
            "left_shift right_shift gcd lcm"
        ),
        "integer operands only",
    ),
    "ldexp": "the second operand is integer exponents",
    "kaiser": "the first operand is the window length, an int",
    **dict.fromkeys(
        _names(
            "take take_along_axis embedding_lookup scatter segment_sum segment_max segment_min "
            "segment_prod bincount sparse_categorical_crossentropy in_top_k ctc_loss "
            "one_hot multi_hot"
        ),
        "one float operand; the other holds indices, ids, labels or counts",
    ),
    **dict.fromkeys(
        _names("full full_like"),
        "the fill value is one value, the dtype is the argument's or x's (left as it is)",
    ),
    **dict.fromkeys(
        _names(
            "cond switch while_loop fori_loop map vectorized_map vectorize custom_gradient "
            "associative_scan jvp"
        ),
        "operands meet only inside the function called, whose ops follow the rule; "
        "associative_scan's leaves never meet each other; jvp's fun runs on the primals alone",
    ),
}

# Ops of one tensor operand (the others are ints, shapes, axes or options).
ONE_OPERAND = set(
    _names(
        """
    abs adaptive_average_pool adaptive_max_pool all amax amin angle any arange arccos arccosh
    arcsin arcsinh arctan arctanh argmax argmin argpartition argsort array array_split
    average_pool bartlett blackman broadcast_to cast cbrt ceil celu cholesky cholesky_inverse
    conjugate convert_to_numpy convert_to_tensor copy corrcoef cos cosh count_nonzero
    ctc_decode cumprod cumsum deg2rad depth_to_space det diag diagflat diagonal diff dsplit
    dtype eig eigh elu empty empty_like erf erfc erfinv exp exp2 expand_dims expm1
    extract_sequences eye fabs flip fliplr flipud floor fold gelu getitem glu hamming hanning
    hard_shrink hard_sigmoid hard_silu hard_swish hard_tanh histogram hsplit i0 identity imag
    inv is_tensor isfinite isinf isnan isneginf isposinf isreal leaky_relu log log10 log1p
    log2 log_sigmoid log_softmax logdet logical_not logsumexp lu_factor matrix_rank max
    max_pool mean median min moments moveaxis nan_to_num nanargmax nanargmin nancumprod
    nancumsum nanmax nanmean nanmedian nanmin nanprod nanstd nansum nanvar ndim negative
    nonzero norm normalize ones ones_like pad pinv prod ptp qr rad2deg ravel real
    rearrange reciprocal relu relu6 repeat reshape rfft roll rot90 round rsqrt saturate_cast
    selu shape sigmoid sign signbit silu sin sinc sinh size slice slogdet soft_shrink softmax
    softplus softsign sort space_to_depth sparse_plus sparse_sigmoid sparsemax split sqrt
    square squareplus squeeze std stop_gradient sum svd swapaxes swish tan tanh tanh_shrink
    tile top_k trace transpose tri tril triu trunc unfold unique unravel_index unstack vander
    var view view_as_complex view_as_real vsplit zeros zeros_like bitwise_not bitwise_invert
    absolute conj get_item
    """
    )
)


def _tensor(shape, index):
    values = np.random.default_rng(index).random(shape) + 0.5
    return ops.convert_to_tensor(values.astype("float32"))


def _array(shape, index):
    return np.random.default_rng(index).random(shape) + 0.5


def _dtypes(result):
    if isinstance(result, (list, tuple)):
        return [dtype for item in result for dtype in _dtypes(item)]
    return [np.dtype(result.dtype)] if hasattr(result, "dtype") else []


def _mixes(shapes):
    """(label, kinds) for each way to set one operand apart: "A" a numpy array, "T" a Tensor."""
    seen = set()
    for position in range(len(shapes)):
        for odd, rest in (("A", "T"), ("T", "A")):
            kinds = tuple(odd if i == position else rest for i in range(len(shapes)))
            if kinds not in seen:
                seen.add(kinds)
                yield "".join(kinds), kinds


def test_every_op_is_classified():
    names = set(ops.__all__)
    classified = set(CASES) | set(EXCLUDED) | ONE_OPERAND
    assert not names - classified, "classify these ops here: " + ", ".join(
        sorted(names - classified)
    )
    assert not classified - names, "not ops: " + ", ".join(sorted(classified - names))
    assert not set(CASES) & (set(EXCLUDED) | ONE_OPERAND)
    assert not set(EXCLUDED) & ONE_OPERAND


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_float64_beside_a_float32_tensor(name):
    shapes, call = CASES[name]
    failures = []
    for label, kinds in _mixes(shapes):
        operands = [
            _tensor(shape, i) if kind == "T" else _array(shape, i)
            for i, (shape, kind) in enumerate(zip(shapes, kinds))
        ]
        dtypes = _dtypes(call(*operands))
        assert dtypes, f"{name}: no result with a dtype"
        wide = [str(d) for d in dtypes if d in (np.float64, np.complex128)]
        if wide:
            failures.append(f"{label}: {wide}")
    assert not failures, f"{name} ({', '.join('T' * len(shapes))} positions): " + "; ".join(
        failures
    )


def test_a_boolean_tensor_condition_makes_numpy_branches_floatx():
    """`where(mask, array, 0.0)`, a common idiom: Keras on JAX gives float32 too."""
    mask = ops.convert_to_tensor([True, False, True])
    out = ops.where(mask, np.array([1.0, 2.0, 3.0]), 0.0)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.numpy(), [1.0, 0.0, 3.0])
    # numpy values alone follow numpy
    assert ops.where(np.array([True, False, True]), np.ones(3), 0.0).dtype == np.float64
    # a float64 Tensor stays float64
    wide = ops.convert_to_tensor(np.ones(3), dtype="float64")
    assert ops.where(mask, wide, np.zeros(3)).dtype == np.float64


def test_a_symbolic_boolean_or_integer_tensor_makes_numpy_constants_floatx():
    """The functional graph records what the eager op computes."""
    inputs = mk.Input((3,))
    masked = ops.where(ops.greater(inputs, 0.5), np.array([1.0, 2.0, 3.0]), 0.0)
    assert masked.dtype == "float32"
    out = mk.Model(inputs, masked)(np.array([[1.0, 0.0, 1.0]], "float32"))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.numpy(), [[1.0, 0.0, 3.0]])
    counts = mk.Input((3,), dtype="int32")
    assert (counts * np.full(3, 0.5)).dtype == "float32"


def test_threshold_takes_a_tensor_default_value():
    x = ops.convert_to_tensor(np.array([0.5, 1.0, 2.0], "float32"))
    default = np.array([-1.0, -2.0, -3.0])
    out = ops.threshold(x, 0.8, default)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.numpy(), [-1.0, 1.0, 2.0])
    with pytest.raises(TypeError, match="default_value"):
        ops.threshold(x, 0.8, "zero")


def test_losses_keep_float32_beside_a_numpy_prediction():
    y_true = ops.convert_to_tensor(np.array([[0.2, 0.8], [0.6, 0.4]], "float32"))
    y_pred = np.array([[0.3, 0.7], [0.5, 0.5]])
    for name in ("mean_squared_error", "binary_crossentropy", "categorical_crossentropy", "huber"):
        loss = getattr(mk.losses, name)
        assert loss(y_true, y_pred).dtype == np.float32, name
        assert loss(y_pred, y_true).dtype == np.float32, name
    expected = np.mean((y_true.numpy() - y_pred) ** 2, axis=-1)
    np.testing.assert_allclose(mk.losses.mean_squared_error(y_true, y_pred).numpy(), expected, 1e-6)
    labels = ops.convert_to_tensor(np.array([1, 0]))
    assert mk.losses.sparse_categorical_crossentropy(labels, y_pred).dtype == np.float32


# Gradients stay float32 with a numpy float64 constant in each other position.
GRADIENT_CASES = [
    "clip", "dense", "where", "select", "threshold", "batch_normalization",
    "layer_normalization", "rms_normalization", "psnr", "average", "dot_product_attention",
    "scatter_update", "slice_update",
]  # fmt: skip


@pytest.mark.parametrize("name", GRADIENT_CASES)
def test_gradients_stay_float32(name):
    shapes, call = CASES[name]
    for position in range(len(shapes)):
        others = [i for i in range(len(shapes)) if i != position]

        def fn(*tensors, position=position, others=others):
            operands = [None] * len(shapes)
            operands[position] = _array(shapes[position], position)
            for i, tensor in zip(others, tensors):
                operands[i] = tensor
            return call(*operands)

        check_float32(fn, [_array(shapes[i], i) for i in others])

"""The functional namespace layers are written in: `minikeras.ops`.

Every op takes Tensors, numpy arrays or Python numbers, returns a Tensor, and
is differentiable by `GradientTape` where that makes sense. Importing it binds
Tensor's operators to these functions (`engine.tensor.bind_operators`).

Given symbolic tensors (functional-API placeholders, anywhere in their
arguments), each function here returns symbolic tensors and records a graph
node, which a functional `Model` runs on data (`ops.symbolic`):

    >>> x = mk.Input((3,))
    >>> mk.ops.mean(x * 2.0, axis=-1).shape
    (None,)
"""

import sys

from minikeras.engine.operators import bind_operators
from minikeras.ops import linalg, nn, numpy
from minikeras.ops.activation_functions import (
    elu,
    erf,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    sigmoid,
    silu,
    softmax,
    softplus,
)
from minikeras.ops.axes import broadcast_to, cumsum, moveaxis, repeat, swapaxes, tril, triu
from minikeras.ops.comparison import (
    clip,
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    maximum,
    minimum,
    not_equal,
    where,
)
from minikeras.ops.conv import conv, conv_transpose, depthwise_conv, separable_conv
from minikeras.ops.creation import (
    arange,
    cast,
    convert_to_tensor,
    eye,
    full,
    full_like,
    ones,
    ones_like,
    stop_gradient,
    zeros,
    zeros_like,
)
from minikeras.ops.cross_entropy import (
    binary_crossentropy,
    categorical_crossentropy,
    sparse_categorical_crossentropy,
)
from minikeras.ops.elementary import (
    abs,
    ceil,
    cos,
    exp,
    expm1,
    floor,
    log,
    log1p,
    log2,
    log10,
    round,
    rsqrt,
    sign,
    sin,
    sqrt,
    tan,
    tanh,
)
from minikeras.ops.fused_dense import dense
from minikeras.ops.gather import embedding_lookup, flip
from minikeras.ops.host import convert_to_numpy
from minikeras.ops.host import shape as _shape_function
from minikeras.ops.logical import (
    all,
    any,
    isfinite,
    isinf,
    isnan,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
)
from minikeras.ops.math import (
    add,
    divide,
    floor_divide,
    mod,
    multiply,
    negative,
    power,
    square,
    subtract,
    true_divide,
)
from minikeras.ops.matrix_products import dot, einsum, matmul, tensordot
from minikeras.ops.pooling import average_pool, max_pool
from minikeras.ops.recurrent import gru, lstm, simple_rnn
from minikeras.ops.reduction import logsumexp, max, mean, min, std, sum, var
from minikeras.ops.shape import (
    concatenate,
    expand_dims,
    getitem,
    one_hot,
    pad,
    reshape,
    split,
    squeeze,
    stack,
    take,
    tile,
    transpose,
)
from minikeras.ops.symbolic import symbolic_aware

# isort: split
# Array manipulation and creation.
from minikeras.ops.casting import saturate_cast, view
from minikeras.ops.creation import array, empty, empty_like
from minikeras.ops.grids import meshgrid, vander
from minikeras.ops.host import dtype, is_tensor, ndim, size
from minikeras.ops.indexing import diag, diagflat, take_along_axis
from minikeras.ops.patches import fold, unfold
from minikeras.ops.products import cdist, correlate, cross, inner, kron, outer, vdot
from minikeras.ops.ranges import (
    bartlett,
    blackman,
    geomspace,
    hamming,
    hanning,
    identity,
    kaiser,
    linspace,
    logspace,
    tri,
)
from minikeras.ops.rearrange import rearrange
from minikeras.ops.reordering import diff, fliplr, flipud, ravel, roll, rot90
from minikeras.ops.scatter import scatter, scatter_update, slice, slice_update
from minikeras.ops.selection import nonzero, select, unravel_index
from minikeras.ops.stacking import (
    append,
    array_split,
    dsplit,
    dstack,
    hsplit,
    hstack,
    unstack,
    vsplit,
    vstack,
)

# isort: split
# Reductions, sorting and statistics.
from minikeras.ops.binning import bincount, digitize, histogram, searchsorted, unique
from minikeras.ops.diagonals import diagonal, trace
from minikeras.ops.integration import trapezoid
from minikeras.ops.nan_filled import (
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmin,
    nanprod,
    nansum,
)
from minikeras.ops.nan_reductions import (
    nanmean,
    nanmedian,
    nanpercentile,
    nanquantile,
    nanstd,
    nanvar,
)
from minikeras.ops.product_reductions import cumprod, prod
from minikeras.ops.segments import segment_max, segment_min, segment_prod, segment_sum
from minikeras.ops.sorting import argmax, argmin, argpartition, argsort, in_top_k, sort, top_k
from minikeras.ops.statistics import (
    amax,
    amin,
    average,
    corrcoef,
    count_nonzero,
    median,
    percentile,
    ptp,
    quantile,
)

# isort: split
# Element-wise math.
from minikeras.ops.bessel import i0
from minikeras.ops.bitwise import (
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    gcd,
    lcm,
    left_shift,
    right_shift,
)
from minikeras.ops.complex_parts import angle, conjugate, imag, isreal, real
from minikeras.ops.numeric import (
    cbrt,
    copy,
    erfc,
    erfinv,
    exp2,
    fabs,
    nan_to_num,
    reciprocal,
    trunc,
)
from minikeras.ops.numeric_pairs import (
    divide_no_nan,
    fmax,
    fmin,
    fmod,
    heaviside,
    hypot,
    ldexp,
    logaddexp,
    logaddexp2,
    nextafter,
)
from minikeras.ops.predicates import allclose, isclose, isin, isneginf, isposinf, signbit
from minikeras.ops.trigonometric import (
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    cosh,
    deg2rad,
    rad2deg,
    sinc,
    sinh,
)

# isort: split
# Neural-network ops.
from minikeras.ops.adaptive_pooling import adaptive_average_pool, adaptive_max_pool
from minikeras.ops.attention import dot_product_attention
from minikeras.ops.ctc import ctc_loss
from minikeras.ops.ctc_decode import ctc_decode
from minikeras.ops.encoding import multi_hot
from minikeras.ops.normalization import (
    batch_normalization,
    layer_normalization,
    moments,
    normalize,
    rms_normalization,
)
from minikeras.ops.piecewise_activations import (
    hard_shrink,
    hard_sigmoid,
    hard_silu,
    hard_tanh,
    relu6,
    soft_shrink,
    sparse_plus,
    sparse_sigmoid,
    threshold,
)
from minikeras.ops.quality import psnr
from minikeras.ops.smooth_activations import (
    celu,
    glu,
    log_sigmoid,
    selu,
    softsign,
    sparsemax,
    squareplus,
    tanh_shrink,
)
from minikeras.ops.space_depth import depth_to_space, space_to_depth

# isort: split
# Gradients, control flow, linear algebra and Fourier ops.
from minikeras.ops.control_flow import cond, fori_loop, switch, while_loop
from minikeras.ops.custom_gradient import custom_gradient
from minikeras.ops.decompositions import cholesky, cholesky_inverse, eig, eigh, lu_factor, qr, svd
from minikeras.ops.determinants import det, logdet, slogdet
from minikeras.ops.forward_mode import jvp
from minikeras.ops.fourier import (
    fft,
    fft2,
    ifft2,
    irfft,
    polar,
    rfft,
    view_as_complex,
    view_as_real,
)
from minikeras.ops.linear_algebra import (
    inv,
    lstsq,
    matrix_rank,
    pinv,
    solve,
    solve_triangular,
)
from minikeras.ops.norms import norm
from minikeras.ops.scans import associative_scan, map, scan, vectorize, vectorized_map
from minikeras.ops.spectral import extract_sequences, istft, stft

# Importing the `shape` module bound `ops.shape` to it: Keras's `ops.shape` is the function.
shape = _shape_function

# The names: Keras's namespaces ops.numpy, ops.nn and ops.linalg list theirs (Keras's
# `keras.ops` holds them all); then Keras's core, math and image ops, at its top only; then
# minikeras's own ops, which Keras's layers compute.
__all__ = [*numpy.__all__, *nn.__all__, *linalg.__all__]
__all__ += [
    "associative_scan", "cast", "cdist", "cond", "convert_to_numpy", "convert_to_tensor",
    "custom_gradient", "dtype", "erf", "erfc", "erfinv", "extract_sequences", "fft", "fft2",
    "fori_loop", "ifft2", "in_top_k", "irfft", "is_tensor", "istft", "logdet", "logsumexp",
    "map", "rearrange", "rfft", "rsqrt", "saturate_cast", "scan", "scatter", "scatter_update",
    "segment_max", "segment_min", "segment_prod", "segment_sum", "shape", "slice",
    "slice_update", "stft", "stop_gradient", "switch", "top_k", "unstack", "vectorized_map",
    "view_as_complex", "view_as_real", "while_loop",
]  # fmt: skip
__all__ += ["dense", "embedding_lookup", "getitem", "gru", "lstm", "simple_rnn"]
# Keras's second names of one function: alias -> the name its graph nodes are recorded under
# (so that each op has one node class and one saved name, as in Keras: `absolute` records
# Keras's Absolute, `get_item` its GetItem).
_ALIASES = {"swish": "silu", "hard_swish": "hard_silu"}
_ALIASES |= {"absolute": "abs", "conj": "conjugate", "get_item": "getitem"}

# Each public function records a graph node when given symbolic tensors (ops.symbolic);
# not those that read a tensor on the host, as in Keras (a symbolic shape is known; a
# symbolic tensor's values are not, and convert_to_numpy says so).
for _name in sorted(set(__all__) - {"convert_to_numpy", "shape"} - set(_ALIASES)):
    globals()[_name] = symbolic_aware(globals()[_name])
for _name, _target in _ALIASES.items():
    globals()[_name] = globals()[_target]
del _name, _target

# Keras's namespaces `ops.nn`, `ops.linalg` and `ops.numpy`: each module lists Keras's names
# in its `__all__`; they are bound here, to the very functions above (symbolic-aware, so one
# node class and one saved name per op), which those modules cannot import without a cycle.
for _namespace in (linalg, nn, numpy):
    for _name in _namespace.__all__:
        setattr(_namespace, _name, globals()[_name])
del _namespace, _name

# Keras's namespace `ops.image`: its ops are defined there (and in its image_* modules).
from minikeras.ops import image  # noqa: E402

for _name in image.KERAS_OPS:
    setattr(image, _name, symbolic_aware(getattr(image, _name)))
del _name

bind_operators(sys.modules[__name__])

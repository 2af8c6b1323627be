"""Keras's namespace `keras.ops.numpy`: the numpy-like ops, as `minikeras.ops.numpy`.

The same functions as at the top of `minikeras.ops` (`mk.ops.numpy.arange
is mk.ops.arange`), under the names Keras's `ops.numpy` gives them, so that
code written `keras.ops.numpy.arange(5)` runs unchanged. It is not numpy:
each function takes and returns Tensors, and records graph nodes on
symbolic tensors, as every op does.

The names are attached at the end of `minikeras/ops/__init__.py`, after the
package has made each function record graph nodes on symbolic tensors (see
`minikeras.ops.nn` for why).

    >>> mk.ops.numpy.arange(5).numpy().tolist()
    [0, 1, 2, 3, 4]
"""

# Keras's names, as Keras 3.15 lists them; ops/__init__.py binds each to its op.
__all__ = [
    "abs", "absolute", "add", "all", "allclose", "amax", "amin", "angle", "any", "append",
    "arange", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "argmax", "argmin", "argpartition", "argsort", "array", "array_split", "average",
    "bartlett", "bincount", "bitwise_and", "bitwise_invert", "bitwise_left_shift",
    "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "blackman",
    "broadcast_to", "cbrt", "ceil", "clip", "concatenate", "conj", "conjugate", "copy",
    "corrcoef", "correlate", "cos", "cosh", "count_nonzero", "cross", "cumprod", "cumsum",
    "deg2rad", "diag", "diagflat", "diagonal", "diff", "digitize", "divide", "divide_no_nan",
    "dot", "dsplit", "dstack", "einsum", "empty", "empty_like", "equal", "exp", "exp2",
    "expand_dims", "expm1", "eye", "fabs", "flip", "fliplr", "flipud", "floor",
    "floor_divide", "fmax", "fmin", "fmod", "full", "full_like", "gcd", "geomspace",
    "get_item", "greater", "greater_equal", "hamming", "hanning", "heaviside", "histogram",
    "hsplit", "hstack", "hypot", "i0", "identity", "imag", "inner", "isclose", "isfinite",
    "isin", "isinf", "isnan", "isneginf", "isposinf", "isreal", "kaiser", "kron", "lcm",
    "ldexp", "left_shift", "less", "less_equal", "linspace", "log", "log10", "log1p", "log2",
    "logaddexp", "logaddexp2", "logical_and", "logical_not", "logical_or", "logical_xor",
    "logspace", "matmul", "max", "maximum", "mean", "median", "meshgrid", "min", "minimum",
    "mod", "moveaxis", "multiply", "nan_to_num", "nanargmax", "nanargmin", "nancumprod",
    "nancumsum", "nanmax", "nanmean", "nanmedian", "nanmin", "nanpercentile", "nanprod",
    "nanquantile", "nanstd", "nansum", "nanvar", "ndim", "negative", "nextafter", "nonzero",
    "not_equal", "ones", "ones_like", "outer", "pad", "percentile", "power", "prod", "ptp",
    "quantile", "rad2deg", "ravel", "real", "reciprocal", "repeat", "reshape", "right_shift",
    "roll", "rot90", "round", "searchsorted", "select", "sign", "signbit", "sin", "sinc",
    "sinh", "size", "slogdet", "sort", "split", "sqrt", "square", "squeeze", "stack", "std",
    "subtract", "sum", "swapaxes", "take", "take_along_axis", "tan", "tanh", "tensordot",
    "tile", "trace", "transpose", "trapezoid", "tri", "tril", "triu", "true_divide", "trunc",
    "unique", "unravel_index", "vander", "var", "vdot", "vectorize", "view", "vsplit",
    "vstack", "where", "zeros", "zeros_like",
]  # fmt: skip

"""The table of Keras's operation classes: for each op, Keras's module and config keys.

`KERAS_OPERATION_SPECS` maps a `minikeras.ops` function that has a Keras
operation class (`keras.ops.mean` has `Mean`) to `(Keras module, config)`,
where `config` maps each key of the class's config to our parameter of that
name, or to a `Fixed` value Keras writes that minikeras does not take.
`layers.operation_specs` splits a call's arguments by it. Grouped by family,
as `minikeras.ops` groups its functions: the array ops (Keras's `ops.numpy`,
`ops.core`, `ops.math`, and the first activations) here, the neural-network,
linear-algebra, Fourier and image ops in `operation_table_nn`.
"""

from minikeras.layers.operation_table_nn import NN_OPERATION_SPECS

__all__ = ["KERAS_OPERATION_SPECS", "Fixed"]


class Fixed:
    """A config key Keras writes that minikeras does not take: it must hold `value`.

    Args:
        value: the only value minikeras accepts (Keras's default).

    Example:
        >>> mk.layers.operation_specs.KERAS_OPERATION_SPECS["one_hot"][1]["sparse"].value is False
        True
    """

    def __init__(self, value):
        self.value = value


_NUMPY, _NN, _CORE, _MATH = (f"keras.src.ops.{name}" for name in ("numpy", "nn", "core", "math"))
_REDUCTION = {"axis": "axis", "keepdims": "keepdims"}
_LINALG = "keras.src.ops.linalg"
_IMAGE = "keras.src.ops.image"

# The element-wise ops whose Keras classes take no config.
_ELEMENTWISE = (
    "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "arcsinh", "arccosh", "arctanh",
    "deg2rad", "rad2deg", "sinc", "fabs", "reciprocal", "cbrt", "exp2", "trunc", "copy", "hypot",
    "logaddexp", "logaddexp2", "divide_no_nan", "fmod", "fmax", "fmin", "heaviside", "ldexp",
    "nextafter", "isneginf", "isposinf", "signbit", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift", "left_shift",
    "right_shift", "gcd", "lcm", "real", "imag", "conjugate", "isreal", "angle", "i0",
)  # fmt: skip

# minikeras.ops function -> (Keras module, {Keras config key: our parameter, or Fixed}).
KERAS_OPERATION_SPECS = {
    **{
        name: (_NUMPY, {})
        for name in (
            "abs",
            "add",
            "divide",
            "dot",
            "equal",
            "exp",
            "floor_divide",
            "getitem",
            "greater",
            "greater_equal",
            "less",
            "less_equal",
            "log",
            "log10",
            "log1p",
            "log2",
            "ceil",
            "cos",
            "expm1",
            "floor",
            "isfinite",
            "isinf",
            "isnan",
            "sin",
            "tan",
            "logical_and",
            "logical_not",
            "logical_or",
            "logical_xor",
            "matmul",
            "maximum",
            "minimum",
            "mod",
            "multiply",
            "negative",
            "not_equal",
            "power",
            "sign",
            "sqrt",
            "square",
            "subtract",
            "tanh",
            "true_divide",
            "where",
        )
    },  # fmt: skip
    **{
        name: (_NUMPY, _REDUCTION)
        for name in ("all", "any", "argmax", "argmin", "mean", "std", "sum", "var")
    },
    "tril": (_NUMPY, {"k": "k"}),
    "round": (_NUMPY, {"decimals": "decimals"}),
    "broadcast_to": (_NUMPY, {"shape": "shape"}),
    "repeat": (_NUMPY, {"repeats": "repeats", "axis": "axis"}),
    "moveaxis": (_NUMPY, {"source": "source", "destination": "destination"}),
    "swapaxes": (_NUMPY, {"axis1": "axis1", "axis2": "axis2"}),
    "rsqrt": (_MATH, {}),
    "triu": (_NUMPY, {"k": "k"}),
    "cumsum": (_NUMPY, {"axis": "axis", "dtype": "dtype"}),
    "max": (_NUMPY, {**_REDUCTION, "initial": "initial"}),
    "min": (_NUMPY, {**_REDUCTION, "initial": "initial"}),
    "concatenate": (_NUMPY, {"axis": "axis"}),
    "stack": (_NUMPY, {"axis": "axis"}),
    "reshape": (_NUMPY, {"newshape": "newshape"}),
    "transpose": (_NUMPY, {"axes": "axes"}),
    "expand_dims": (_NUMPY, {"axis": "axis"}),
    "squeeze": (_NUMPY, {"axis": "axis"}),
    "flip": (_NUMPY, {"axis": "axis"}),
    "take": (_NUMPY, {"axis": "axis"}),
    "clip": (_NUMPY, {"x_min": "x_min", "x_max": "x_max"}),
    "split": (_NUMPY, {"indices_or_sections": "indices_or_sections", "axis": "axis"}),
    "tensordot": (_NUMPY, {"axes": "axes"}),
    "einsum": (_NUMPY, {"subscripts": "subscripts"}),
    "pad": (_NUMPY, {"pad_width": "pad_width", "mode": "mode"}),
    "zeros_like": (_NUMPY, {"dtype": "dtype"}),
    "ones_like": (_NUMPY, {"dtype": "dtype"}),
    "full_like": (_NUMPY, {"dtype": "dtype"}),
    **{name: (_NN, {}) for name in ("relu", "sigmoid", "silu", "softplus")},
    "softmax": (_NN, {"axis": "axis"}),
    "log_softmax": (_NN, {"axis": "axis"}),
    "elu": (_NN, {"alpha": "alpha"}),
    "gelu": (_NN, {"approximate": "approximate"}),
    "leaky_relu": (_NN, {"negative_slope": "negative_slope"}),
    "one_hot": (
        _NN,
        {"num_classes": "num_classes", "axis": "axis", "dtype": "dtype", "sparse": Fixed(False)},
    ),  # fmt: skip
    "cast": (_CORE, {"dtype": "dtype"}),
    "stop_gradient": (_CORE, {}),
    "convert_to_tensor": (
        _CORE,
        {"dtype": "dtype", "sparse": Fixed(None), "ragged": Fixed(None)},
    ),  # fmt: skip
    "logsumexp": (_MATH, {"axis": "axis", "keepdims": "keepdims"}),
    "erf": (_MATH, {}),
    # Array manipulation and creation.
    **{name: (_NUMPY, {}) for name in ("ravel", "hstack", "vstack", "dstack", "fliplr", "flipud")},
    **{name: (_NUMPY, {"k": "k"}) for name in ("diag", "diagflat")},
    **{
        name: (_NUMPY, {"indices_or_sections": "indices_or_sections"})
        for name in ("hsplit", "vsplit", "dsplit")
    },
    "array_split": (_NUMPY, {"indices_or_sections": "indices_or_sections", "axis": "axis"}),
    "append": (_NUMPY, {"axis": "axis"}),
    "diff": (_NUMPY, {"n": "n", "axis": "axis"}),
    "roll": (_NUMPY, {"shift": "shift", "axis": "axis"}),
    "rot90": (_NUMPY, {"k": "k", "axes": "axes"}),
    "take_along_axis": (_NUMPY, {"axis": "axis"}),
    "unstack": (_CORE, {"num": "num", "axis": "axis"}),
    "linspace": (
        _NUMPY,
        {
            "num": "num",
            "endpoint": "endpoint",
            "retstep": "retstep",
            "dtype": "dtype",
            "axis": "axis",
        },
    ),  # fmt: skip
    "logspace": (
        _NUMPY,
        {"num": "num", "endpoint": "endpoint", "base": "base", "dtype": "dtype", "axis": "axis"},
    ),  # fmt: skip
    "geomspace": (_NUMPY, {"num": "num", "endpoint": "endpoint", "dtype": "dtype", "axis": "axis"}),
    **{name: (_NUMPY, {}) for name in ("outer", "inner", "kron", "vdot", "select", "nonzero")},
    "cross": (_NUMPY, {"axisa": "axisa", "axisb": "axisb", "axisc": "axisc", "axis": "axis"}),
    "vander": (_NUMPY, {"N": "N", "increasing": "increasing"}),
    "meshgrid": (_NUMPY, {"indexing": "indexing"}),
    "unravel_index": (_NUMPY, {"shape": "shape"}),
    "array": (_NUMPY, {"dtype": "dtype"}),
    "empty_like": (_NUMPY, {"dtype": "dtype"}),
    "saturate_cast": (_CORE, {"dtype": "dtype"}),
    "scatter": (_CORE, {"shape": "shape"}),
    "scatter_update": (_CORE, {"reduction": "reduction"}),
    "slice": (_CORE, {"shape": "shape"}),
    "slice_update": (_CORE, {}),
    "view": (_NUMPY, {"dtype": "dtype"}),
    "correlate": (_NUMPY, {"mode": "mode"}),
    "cdist": (_MATH, {}),
    "unfold": (
        _NN,
        {
            "kernel_size": "kernel_size",
            "dilation": "dilation",
            "padding": "padding",
            "stride": "stride",
        },
    ),  # fmt: skip
    "fold": (
        _NN,
        {
            "output_size": "output_size",
            "kernel_size": "kernel_size",
            "dilation": "dilation",
            "padding": "padding",
            "stride": "stride",
        },
    ),  # fmt: skip
    "rearrange": ("keras.src.ops.einops", {}),
    # Reductions, sorting and statistics.
    "prod": (_NUMPY, {**_REDUCTION, "dtype": "dtype"}),
    "cumprod": (_NUMPY, {"axis": "axis", "dtype": "dtype"}),
    **{name: (_NUMPY, _REDUCTION) for name in ("amax", "amin", "ptp", "median")},
    "average": (_NUMPY, {"axis": "axis"}),
    "count_nonzero": (_NUMPY, {"axis": "axis"}),
    "sort": (_NUMPY, {"axis": "axis"}),
    "argsort": (_NUMPY, {"axis": "axis"}),
    "argpartition": (_NUMPY, {"kth": "kth", "axis": "axis"}),
    "top_k": (_MATH, {"k": "k", "sorted": "sorted"}),
    "in_top_k": (_MATH, {"k": "k"}),
    **{
        name: (_NUMPY, {"axis": "axis", "method": "method", "keepdims": "keepdims"})
        for name in ("quantile", "percentile")
    },
    **{
        name: (_NUMPY, {"offset": "offset", "axis1": "axis1", "axis2": "axis2"})
        for name in ("trace", "diagonal")
    },
    **{
        name: (_MATH, {"num_segments": "num_segments", "sorted": "sorted"})
        for name in ("segment_sum", "segment_max", "segment_min", "segment_prod")
    },
    "searchsorted": (_NUMPY, {"side": "side"}),
    "digitize": (_NUMPY, {}),
    "bincount": (_NUMPY, {"weights": "weights", "minlength": "minlength", "sparse": "sparse"}),
    "histogram": (_NUMPY, {"bins": "bins", "range": "range"}),
    "unique": (
        _NUMPY,
        {
            name: name
            for name in ("sorted", "return_index", "return_inverse", "return_counts", "axis")
            + ("size", "fill_value")
        },
    ),
    "corrcoef": (_NUMPY, {}),
    "trapezoid": (_NUMPY, {"x": "x", "dx": "dx", "axis": "axis"}),
    **{
        f"nan{name}": (_NUMPY, _REDUCTION)
        for name in ("sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin")
    },
    "nanmedian": (_NUMPY, _REDUCTION),
    "nancumsum": (_NUMPY, {"axis": "axis", "dtype": "dtype"}),
    "nancumprod": (_NUMPY, {"axis": "axis", "dtype": "dtype"}),
    **{
        name: (_NUMPY, {"axis": "axis", "method": "method", "keepdims": "keepdims"})
        for name in ("nanquantile", "nanpercentile")
    },
    # Element-wise math.
    **{name: (_NUMPY, {}) for name in _ELEMENTWISE},
    "erfc": (_MATH, {}),
    "erfinv": (_MATH, {}),
    "nan_to_num": (_NUMPY, {"nan": "nan", "posinf": "posinf", "neginf": "neginf"}),
    "isclose": (_NUMPY, {"equal_nan": "equal_nan"}),
    "allclose": (_NUMPY, {"rtol": "rtol", "atol": "atol", "equal_nan": "equal_nan"}),
    "isin": (_NUMPY, {"assume_unique": "assume_unique", "invert": "invert"}),
    **NN_OPERATION_SPECS,  # (operation_table_nn: the nn, linalg, Fourier and image ops)
}

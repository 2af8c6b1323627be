"""`HashedCrossing`: crosses categorical features into `num_bins` bins, with Keras's hash.

Keras 3 computes it with TensorFlow's `tf.sparse.cross_hashed` (and refuses to
run without TensorFlow). That op starts from a fixed key, `0xDECAFCAFFE`, and
folds in each feature's 64-bit value with `FingerprintCat64`; a string's value
is its FarmHash `Fingerprint64` (`fingerprints.py`), an integer's is the
integer itself (as two's complement). The bin is the result modulo
`num_bins`. Written out here in plain Python, so the bins equal Keras's.
"""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers.layer import Layer
from minikeras.layers.preprocessing.categorical import _as_array, _check_count, hash_strings
from minikeras.layers.preprocessing.encoding import check_output_mode, encode, encoded_shape

__all__ = ["HashedCrossing", "cross_hashed"]

MASK = (1 << 64) - 1
HASH_KEY = 0xDECAFCAFFE  # TensorFlow's default key of sparse crosses
_MUL = 0xC6A4A7935BD1E995


def _shift_mix(value):
    return value ^ (value >> 47)


def _fingerprint_cat64(first, second):
    """TensorFlow's `FingerprintCat64`: two 64-bit fingerprints combined into one."""
    result = first ^ _MUL
    result ^= (_shift_mix((second * _MUL) & MASK) * _MUL) & MASK
    result = (result * _MUL) & MASK
    result = (_shift_mix(result) * _MUL) & MASK
    return _shift_mix(result)


def _feature_values(values):
    """Each feature's 64-bit value: Fingerprint64 of a string, an integer as it is."""
    if values.dtype.kind in "iub":
        return [int(v) & MASK for v in values.ravel()]
    return [int(h) for h in hash_strings(values).ravel()]


def cross_hashed(features, num_bins):
    """The hashed cross of equal-shaped features, as `tf.sparse.cross_hashed` gives it.

    Args:
        features: a list of arrays of one shape, of strings or integers.
        num_bins: the number of bins.

    Returns:
        An int64 array of the features' shape, each entry in `[0, num_bins)`.

    Example:
        >>> from minikeras.layers.preprocessing.hashed_crossing import cross_hashed
        >>> cross_hashed([np.array(["A", "B"]), np.array([101, 101])], 5)
        array([1, 4])
    """
    columns = [_feature_values(np.asarray(feature)) for feature in features]
    bins = []
    for row in zip(*columns):
        value = HASH_KEY
        for feature in row:
            value = _fingerprint_cat64(value, feature)
        bins.append(value % num_bins)
    return np.array(bins, dtype=np.int64).reshape(np.shape(features[0]))


class HashedCrossing(Layer):
    """Crosses two or more categorical features: one bin per combination, by hashing.

    Each sample's features (strings or integers, one per input) are hashed
    together into `[0, num_bins)`, with Keras's (TensorFlow's) hash, so the
    bins equal Keras's (see the module). Different combinations may share a
    bin; the order of the inputs matters.

    Args:
        num_bins: the number of bins.
        output_mode: `"int"` (the bin indices as int64) or `"one_hot"`.
        sparse: must be False (as in Keras on other backends than TensorFlow).
        **kwargs: `name`, `dtype` (of the one-hot outputs; for `"int"`, int64).

    Call arguments:
        inputs: a list or tuple of at least two arrays of one shape: `()`,
            `(batch,)` or `(batch, 1)`, of strings or integers.

    Input shape:
        A list of `(batch,)` or `(batch, 1)` (or scalar) inputs, all alike.

    Output shape:
        `"int"`: the inputs' shape. `"one_hot"`: `(batch, num_bins)` (`(num_bins,)`
        for scalars).

    Raises:
        ValueError: for a bad `num_bins` or `output_mode`, `sparse=True`, fewer
            than two inputs, inputs of other shapes or of different shapes,
            or inputs that are neither strings nor integers.

    Example:
        >>> layer = mk.layers.HashedCrossing(num_bins=5)
        >>> layer([np.array(["A", "B", "A"]), np.array([101, 101, 102])]).numpy()
        array([1, 4, 3])
    """

    _accepts_strings = True

    def __init__(self, num_bins, output_mode="int", sparse=False, **kwargs):
        if output_mode == "int" and kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64"  # (as Keras)
        super().__init__(**kwargs)
        self.num_bins = _check_count("HashedCrossing", "num_bins", num_bins)
        self.output_mode = check_output_mode("HashedCrossing", output_mode, ("int", "one_hot"))
        if sparse:
            raise ValueError("HashedCrossing: `sparse=True` is not supported by minikeras")
        self.sparse = False

    def _convert_inputs(self, inputs):
        # Refused before the usual conversion, which would cast floats to the int64 dtype.
        for x in inputs if isinstance(inputs, (list, tuple)) else [inputs]:
            dtype = getattr(x, "dtype", None)
            dtype = np.asarray(x).dtype if dtype is None else np.dtype(dtype)
            if dtype.kind in "fc":
                raise ValueError(
                    f"HashedCrossing '{self.name}' crosses strings or integers, got an input "
                    f"of dtype {dtype}"
                )
        return super()._convert_inputs(inputs)

    def _features(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(
                f"HashedCrossing '{self.name}' takes a list or tuple of at least two inputs, "
                f"got {inputs!r:.100}"
            )
        features = [_as_array(x) for x in inputs]
        shape = features[0].shape
        if len(shape) > 2 or (len(shape) == 2 and shape[-1] != 1):
            raise ValueError(
                f"HashedCrossing '{self.name}': inputs must have shape (), (batch,) or "
                f"(batch, 1), got {[f.shape for f in features]}"
            )
        if any(f.shape != shape for f in features):
            raise ValueError(
                f"HashedCrossing '{self.name}': the inputs must have one shape, got "
                f"{[f.shape for f in features]}"
            )
        if any(f.dtype.kind not in "iuUSO" for f in features):
            raise ValueError(
                f"HashedCrossing '{self.name}' crosses strings or integers, got dtypes "
                f"{[str(f.dtype) for f in features]}"
            )
        return features

    def call(self, inputs):
        features = self._features(inputs)
        bins = cross_hashed(features, self.num_bins)
        if self.output_mode == "int":
            return Tensor(bins.astype(self.dtype if np.dtype(self.dtype).kind in "iu" else "int64"))
        return Tensor(encode(bins, "one_hot", self.num_bins, self.dtype))

    def compute_output_shape(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or len(input_shape) < 2:
            raise ValueError(
                f"HashedCrossing '{self.name}' takes a list of at least two inputs, got "
                f"shape {input_shape!r}"
            )
        return encoded_shape(input_shape[0], self.output_mode, self.num_bins)

    def get_config(self):
        return {
            **super().get_config(),
            "num_bins": self.num_bins,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
        }

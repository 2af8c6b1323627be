"""Preprocessing of categories given as integers or strings: `CategoryEncoding` and `Hashing`."""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.layer import Layer
from minikeras.layers.preprocessing.encoding import check_output_mode, encode, encoded_shape
from minikeras.layers.preprocessing.fingerprints import fingerprint64, siphash24

__all__ = ["CategoryEncoding", "Hashing", "hash_strings"]


def _check_count(layer_class, argument, value, low=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{layer_class}: `{argument}` must be an int >= {low}, got {value!r}")
    return int(value)


def _as_array(inputs):
    return inputs.numpy() if isinstance(inputs, Tensor) else np.asarray(inputs)


class CategoryEncoding(Layer):
    """Encodes integer categories in `[0, num_tokens)` as one-hot, multi-hot or count vectors.

    - `"one_hot"`: each integer becomes a vector with a 1 at its index; a
      trailing axis of size 1 is replaced by the new axis.
    - `"multi_hot"`: each sample (the integers along axis 1) becomes one
      vector with a 1 at every index that occurs in it.
    - `"count"`: as multi-hot, with how often each index occurs (or the sum of
      the `count_weights` given at call).

    Args:
        num_tokens: the number of categories; inputs must lie in `[0, num_tokens)`.
        output_mode: `"multi_hot"` (default), `"one_hot"` or `"count"`.
        sparse: must be False (sparse outputs are not supported).
        **kwargs: `name`, `dtype` (of the outputs, float32 by default).

    Input shape:
        `(batch,)` or `(batch, tokens)` integers (a 1-D input is one sample
        for `"multi_hot"` and `"count"`).

    Output shape:
        `(batch, num_tokens)`; `"one_hot"` of `(batch, tokens)` gives
        `(batch, tokens, num_tokens)`.

    Raises:
        ValueError: for a bad `num_tokens` or `output_mode`, or, when called,
            for inputs outside `[0, num_tokens)`.

    Example:
        >>> layer = mk.layers.CategoryEncoding(num_tokens=4, output_mode="count")
        >>> layer(np.array([[0, 1, 1], [3, 3, 2]])).numpy()
        array([[1., 2., 0., 0.],
               [0., 0., 1., 2.]], dtype=float32)
    """

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        self.output_mode = check_output_mode(
            "CategoryEncoding", output_mode, ("one_hot", "multi_hot", "count")
        )
        self.num_tokens = _check_count("CategoryEncoding", "num_tokens", num_tokens)
        if sparse:
            raise ValueError("CategoryEncoding: `sparse=True` is not supported by minikeras")
        self.sparse = False

    def call(self, inputs, count_weights=None):
        codes = _as_array(inputs)
        if codes.dtype.kind not in "biu":
            raise TypeError(
                f"CategoryEncoding '{self.name}' takes integer inputs, got dtype {codes.dtype}"
            )
        if codes.size and (codes.min() < 0 or codes.max() >= self.num_tokens):
            raise ValueError(
                f"CategoryEncoding '{self.name}': inputs must be in "
                f"[0, num_tokens={self.num_tokens}), got values from {codes.min()} to {codes.max()}"
            )
        if count_weights is not None:
            if self.output_mode != "count":
                raise ValueError(
                    f"CategoryEncoding '{self.name}': `count_weights` needs output_mode='count', "
                    f"not {self.output_mode!r}"
                )
            count_weights = _as_array(count_weights).astype(self.dtype)
            if count_weights.shape != codes.shape:
                raise ValueError(
                    f"CategoryEncoding '{self.name}': `count_weights` of shape "
                    f"{count_weights.shape} must have the inputs' shape {codes.shape}"
                )
        return Tensor(encode(codes, self.output_mode, self.num_tokens, self.dtype, count_weights))

    def compute_output_spec(self, inputs, *args, **kwargs):
        # Its eager dtype, `dtype` (float32 under mixed_float16). Keras's eager outputs have
        # it too; its symbolic ones say the compute dtype (float16), which they are not.
        return SymbolicTensor(self.compute_output_shape(inputs.shape), self.dtype)

    def compute_output_shape(self, input_shape):
        return encoded_shape(input_shape, self.output_mode, self.num_tokens)

    def get_config(self):
        return {
            **super().get_config(),
            "num_tokens": self.num_tokens,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
        }


def _text(value):
    return bytes(value).decode("utf-8") if isinstance(value, bytes) else str(value)


def _matches(values, target):
    """Where `values` equal `target`, strings and bytes compared as text."""
    target = _text(target)
    flat = [_text(v) == target for v in values.ravel()]
    return np.array(flat, dtype=bool).reshape(values.shape)


def hash_strings(values, salt=None):
    """64-bit hashes of strings, the ones Keras's `Hashing` uses (through TensorFlow).

    Without a salt: FarmHash `Fingerprint64`; with one: SipHash-2-4 keyed by
    the salt (an int `s` means the key `(s, s)`). Both are written in plain
    Python in `fingerprints.py`, so the bins equal Keras's.

    Args:
        values: an array of str, bytes or ints (ints are hashed as their
            decimal text, as Keras does; str as UTF-8).
        salt: None, or an int or pair of ints keying the hash.

    Returns:
        A uint64 array of the values' shape.

    Example:
        >>> from minikeras.layers.preprocessing.categorical import hash_strings
        >>> hash_strings(np.array(["A", "B", "C"])) % 3
        array([1, 0, 1], dtype=uint64)
    """
    values = np.asarray(values)
    if salt is not None:
        key = (int(salt), int(salt)) if np.ndim(salt) == 0 else tuple(int(k) for k in salt)
    flat = values.ravel()
    out = np.empty(flat.shape, dtype=np.uint64)
    for i, value in enumerate(flat):
        data = bytes(value) if isinstance(value, bytes) else str(value).encode("utf-8")
        out[i] = fingerprint64(data) if salt is None else siphash24(data, *key)
    return out.reshape(values.shape)


class Hashing(Layer):
    """Hashes strings or integers into `num_bins` bins: `hash(x) % num_bins`.

    With `mask_value`, inputs equal to it go to bin 0 and the others to bins
    `1..num_bins - 1`. The hash is Keras's: FarmHash `Fingerprint64`, or
    SipHash-2-4 keyed by `salt` (see `hash_strings`), so the bins equal
    Keras's; integers are hashed as their decimal text, as in Keras.

    Args:
        num_bins: the number of bins, including the mask bin if any.
        mask_value: a value that maps to bin 0, or None.
        salt: None, or an int or pair of ints that keys the hash.
        output_mode: `"int"` (default, the bin indices as int64), `"one_hot"`,
            `"multi_hot"` or `"count"` (see `CategoryEncoding`).
        sparse: must be False (sparse outputs are not supported).
        **kwargs: `name`, `dtype` (of the non-int outputs).

    Input shape:
        Any shape of strings (str/bytes/object arrays) or integers.

    Output shape:
        As the inputs for `"int"`; see `CategoryEncoding` for the others.

    Raises:
        ValueError: for a bad `num_bins` or `output_mode`.
        TypeError: when called on floats.

    Example:
        >>> mk.layers.Hashing(num_bins=3)(np.array([["A"], ["B"], ["C"]])).numpy()
        array([[1],
               [0],
               [1]])
        >>> mk.layers.Hashing(num_bins=3, mask_value="")(np.array(["A", "", "C"])).numpy()
        array([1, 0, 2])
    """

    _accepts_strings = True

    def __init__(
        self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, **kwargs
    ):
        super().__init__(**kwargs)
        self.num_bins = _check_count("Hashing", "num_bins", num_bins)
        self.output_mode = check_output_mode("Hashing", output_mode)
        if mask_value is not None and self.num_bins < 2:
            raise ValueError(
                f"Hashing: with a `mask_value`, `num_bins` must be >= 2, got {num_bins}"
            )
        if salt is not None and not (
            np.ndim(salt) == 0
            and isinstance(salt, (int, np.integer))
            or np.ndim(salt) == 1
            and len(salt) == 2
        ):
            raise ValueError(f"Hashing: `salt` must be None, an int or two ints, got {salt!r}")
        if sparse:
            raise ValueError("Hashing: `sparse=True` is not supported by minikeras")
        self.mask_value = mask_value
        self.salt = salt if salt is None or np.ndim(salt) == 0 else [int(s) for s in salt]
        self.sparse = False

    def call(self, inputs):
        values = _as_array(inputs)
        if values.dtype.kind == "f":
            raise TypeError(
                f"Hashing '{self.name}' takes strings or integers, got dtype {values.dtype}"
            )
        hashes = hash_strings(values, self.salt)
        if self.mask_value is None:
            bins = (hashes % np.uint64(self.num_bins)).astype(np.int64)
        else:
            bins = (hashes % np.uint64(self.num_bins - 1)).astype(np.int64) + 1
            bins[_matches(values, self.mask_value)] = 0
        return Tensor(encode(bins, self.output_mode, self.num_bins, self.dtype))

    def compute_output_shape(self, input_shape):
        return encoded_shape(input_shape, self.output_mode, self.num_bins)

    def compute_output_spec(self, inputs):
        dtype = "int64" if self.output_mode == "int" else self.dtype  # (the bins, as in Keras)
        return SymbolicTensor(self.compute_output_shape(inputs.shape), dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "num_bins": self.num_bins,
            "mask_value": self.mask_value,
            "salt": self.salt,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
        }

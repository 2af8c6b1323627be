"""`StringLookup` and `IntegerLookup`: vocabularies of strings or of integers."""

import numpy as np

from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.preprocessing.encoding import check_choice
from minikeras.layers.preprocessing.index_lookup import IndexLookup

__all__ = ["IntegerLookup", "StringLookup"]


def _output_spec(layer, inputs, token_dtype):
    """Symbolic outputs: int64 indices and float encodings, as Keras's; inverted lookups give
    tokens (Keras's symbolic outputs say int64 there too, though its lookups return tokens)."""
    shape = layer.compute_output_shape(inputs.shape)
    if layer.output_mode != "int":
        return SymbolicTensor(shape, layer.dtype)
    return SymbolicTensor(shape, token_dtype if layer.invert else "int64")


class StringLookup(IndexLookup):
    """Maps strings to integer indices from a vocabulary, given or learnt by `adapt`.

    In `"int"` mode with a `mask_token`, index 0 is the mask; then come
    `num_oov_indices` indices for out-of-vocabulary (OOV) strings (several
    are chosen by a hash of the string); then the vocabulary. The other
    output modes encode each sample's indices (see `CategoryEncoding`), with
    no mask index (mask tokens are dropped); `"tf_idf"` weights the counts by
    the idf weights. `invert=True` maps indices back to strings.

    Differences from Keras: `get_config` holds the vocabulary (and idf
    weights) even when learnt by `adapt`; `sparse=True` is not supported.
    The OOV hash is Keras's (FarmHash, or SipHash with `salt`).

    Args:
        max_tokens: the largest vocabulary size, mask and OOV indices
            included; None for no limit.
        num_oov_indices: how many indices OOV strings share (0: an OOV string
            is an error).
        mask_token: the string that means padding, or None (default).
        oov_token: the string shown for OOV indices (default `"[UNK]"`).
        vocabulary: a list or array of unique strings, or the path of a text
            file with one per line; None to learn it with `adapt`.
        idf_weights: in `"tf_idf"` mode with a `vocabulary`, one weight per entry.
        invert: map indices to strings instead.
        output_mode: `"int"` (default), `"one_hot"`, `"multi_hot"`,
            `"count"` or `"tf_idf"`.
        pad_to_max_tokens: make the encoded outputs `max_tokens` wide.
        sparse: must be False.
        encoding: the text encoding of bytes inputs (default `"utf-8"`).
        salt: an int or pair of ints that keys the OOV hash.
        **kwargs: `name`, `dtype` (of the encoded outputs).

    Input shape:
        Any shape of strings (str, bytes or object arrays, or lists); with
        `invert=True`, integer indices.

    Output shape:
        The inputs' shape in `"int"` mode (int64 indices, or strings when
        inverted); `(batch, vocabulary_size)` floats in the count modes, a
        new last axis for `"one_hot"`.

    Raises:
        ValueError: for bad arguments, a bad vocabulary, or, when called with
            `num_oov_indices=0`, an OOV string.

    Example:
        >>> layer = mk.layers.StringLookup(vocabulary=["a", "b", "c"])
        >>> layer(np.array([["a", "c"], ["d", "b"]])).numpy()
        array([[1, 3],
               [0, 2]])
        >>> inverse = mk.layers.StringLookup(vocabulary=["a", "b", "c"], invert=True)
        >>> inverse(np.array([3, 0])).numpy()
        array(['c', '[UNK]'], dtype='<U5')
    """

    def __init__(
        self,
        max_tokens=None,
        num_oov_indices=1,
        mask_token=None,
        oov_token="[UNK]",
        vocabulary=None,
        idf_weights=None,
        invert=False,
        output_mode="int",
        pad_to_max_tokens=False,
        sparse=False,
        encoding="utf-8",
        salt=None,
        **kwargs,
    ):
        # _token() reads it while IndexLookup.__init__ reads the vocabulary.
        object.__setattr__(self, "encoding", encoding)
        super().__init__(
            max_tokens=max_tokens,
            num_oov_indices=num_oov_indices,
            mask_token=mask_token,
            oov_token=oov_token,
            vocabulary=vocabulary,
            idf_weights=idf_weights,
            invert=invert,
            output_mode=output_mode,
            pad_to_max_tokens=pad_to_max_tokens,
            sparse=sparse,
            salt=salt,
            **kwargs,
        )

    def _token(self, value):
        if isinstance(value, (bytes, np.bytes_)):
            return bytes(value).decode(self.encoding)
        if isinstance(value, (str, np.str_)):
            return str(value)
        raise TypeError(
            f"StringLookup: expected strings, got {value!r} of type {type(value).__name__}"
        )

    def _inverted_array(self, tokens):
        return tokens.astype(str)

    def compute_output_spec(self, inputs):
        return _output_spec(self, inputs, "str")

    def get_config(self):
        return {**super().get_config(), "encoding": self.encoding}


class IntegerLookup(IndexLookup):
    """Maps integers to indices from a vocabulary, given or learnt by `adapt`.

    The index layout and output modes are those of `StringLookup`. Several OOV
    indices are chosen by `token % num_oov_indices` (`oov_method="floormod"`,
    the default) or by a hash of the token's decimal text (`"farmhash"`, as
    `Hashing` does).

    Args:
        max_tokens: the largest vocabulary size, mask and OOV indices included.
        num_oov_indices: how many indices OOV integers share.
        mask_token: the integer that means padding, or None (default).
        oov_token: the integer shown for OOV indices (default -1).
        vocabulary: a list or array of unique integers, or a file path.
        vocabulary_dtype: `"int64"`, the only one, as in Keras.
        idf_weights: in `"tf_idf"` mode with a `vocabulary`, one weight per entry.
        invert: map indices back to integers.
        output_mode: `"int"`, `"one_hot"`, `"multi_hot"`, `"count"` or `"tf_idf"`.
        sparse: must be False.
        pad_to_max_tokens: make the encoded outputs `max_tokens` wide.
        oov_method: `"floormod"` (default) or `"farmhash"`.
        salt: with `"farmhash"`, an int or pair of ints that keys the hash.
        **kwargs: `name`, `dtype` (of the encoded outputs).

    Input shape:
        Any shape of integers.

    Output shape:
        As `StringLookup`.

    Raises:
        ValueError: for bad arguments or vocabularies, or an OOV integer with
            `num_oov_indices=0`.

    Example:
        >>> layer = mk.layers.IntegerLookup(vocabulary=[12, 36, 1138])
        >>> layer(np.array([[12, 1138], [42, 36]])).numpy()
        array([[1, 3],
               [0, 2]])
    """

    def __init__(
        self,
        max_tokens=None,
        num_oov_indices=1,
        mask_token=None,
        oov_token=-1,
        vocabulary=None,
        vocabulary_dtype="int64",
        idf_weights=None,
        invert=False,
        output_mode="int",
        sparse=False,
        pad_to_max_tokens=False,
        oov_method="floormod",
        salt=None,
        **kwargs,
    ):
        if vocabulary_dtype != "int64":
            raise ValueError(
                f"IntegerLookup: `vocabulary_dtype` must be 'int64', got {vocabulary_dtype!r}"
            )
        check_choice("IntegerLookup", "oov_method", oov_method, ("floormod", "farmhash"))
        if salt is not None and oov_method != "farmhash":
            raise ValueError("IntegerLookup: `salt` needs oov_method='farmhash'")
        # _oov_buckets() reads it while IndexLookup.__init__ reads the vocabulary.
        object.__setattr__(self, "oov_method", oov_method)
        object.__setattr__(self, "vocabulary_dtype", vocabulary_dtype)
        super().__init__(
            max_tokens=max_tokens,
            num_oov_indices=num_oov_indices,
            mask_token=mask_token,
            oov_token=oov_token,
            vocabulary=vocabulary,
            idf_weights=idf_weights,
            invert=invert,
            output_mode=output_mode,
            pad_to_max_tokens=pad_to_max_tokens,
            sparse=sparse,
            salt=salt,
            **kwargs,
        )

    def _token(self, value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            if isinstance(value, str) and value.lstrip("-").isdigit():
                return int(value)  # a vocabulary file's lines
            raise TypeError(
                f"IntegerLookup: expected integers, got {value!r} of type {type(value).__name__}"
            )
        return int(value)

    def _oov_buckets(self, tokens):
        if self.oov_method == "floormod":
            return np.asarray(tokens, dtype=np.int64) % self.num_oov_indices
        return super()._oov_buckets(tokens)

    def _inverted_array(self, tokens):
        return tokens.astype(np.int64)

    def compute_output_spec(self, inputs):
        return _output_spec(self, inputs, "int64")

    def get_config(self):
        return {
            **super().get_config(),
            "vocabulary_dtype": self.vocabulary_dtype,
            "oov_method": self.oov_method,
        }

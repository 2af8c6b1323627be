"""`IndexLookup`, the base of `StringLookup` and `IntegerLookup`: tokens to indices and back.

The index layout is Keras 3's: in `"int"` mode with a `mask_token`, index 0 is
the mask; then come `num_oov_indices` out-of-vocabulary (OOV) indices; then
the vocabulary, most frequent token first. In the other output modes there is
no mask index: mask tokens are dropped from the counts.
"""

import collections

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers import symbolic
from minikeras.layers.layer import Layer
from minikeras.layers.preprocessing.categorical import hash_strings
from minikeras.layers.preprocessing.encoding import check_output_mode, encode, encoded_shape

__all__ = ["IndexLookup", "batches_for_adapt"]

LOOKUP_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")


def batches_for_adapt(data, steps=None):
    """`data` as a list of 2-D batches (rows are documents), the way Keras reads them.

    An array, list or tuple is one batch whose 1-D form holds one token per
    document; any other iterable (a generator, a dataset) yields batches, a
    1-D batch being one document.
    """
    if isinstance(data, Tensor):
        data = data.numpy()
    if isinstance(data, (np.ndarray, list, tuple)):
        batch = np.asarray(data)
        return [batch.reshape(-1, 1) if batch.ndim <= 1 else batch]
    if isinstance(data, str) or not hasattr(data, "__iter__"):
        raise TypeError(f"adapt: `data` must be an array or an iterable of batches, got {data!r}")
    batches = []
    for i, batch in enumerate(data):
        if steps is not None and i >= steps:
            break
        batch = np.asarray(batch.numpy() if isinstance(batch, Tensor) else batch)
        batches.append(batch.reshape(1, -1) if batch.ndim <= 1 else batch)
    return batches


class IndexLookup(Layer):
    """Maps tokens to integer indices from a vocabulary (the base of the lookup layers).

    Subclasses say what a token is (`_token`) and how an OOV token picks one
    of several OOV indices (`_oov_buckets`). See `StringLookup` for the
    arguments; their meanings are Keras 3's. Differences from Keras:
    `get_config` holds the vocabulary (and idf weights) whether given or
    learnt by `adapt` (Keras saves a learnt one as a file asset). Several OOV
    indices are chosen by Keras's hash (see `Hashing`), so they match Keras's.

    Args:
        max_tokens: the largest vocabulary size, mask and OOV indices included.
        num_oov_indices: how many indices OOV tokens share.
        mask_token: the token that means padding, or None.
        oov_token: the token `get_vocabulary` and inverted lookups show for OOV.
        vocabulary: a list of tokens or a text file with one per line.
        idf_weights: with `output_mode="tf_idf"` and `vocabulary`, one weight per token.
        invert: map indices back to tokens.
        output_mode: `"int"`, `"one_hot"`, `"multi_hot"`, `"count"` or `"tf_idf"`.
        pad_to_max_tokens: make the encoded outputs `max_tokens` wide.
        sparse: must be False (sparse outputs are not supported).
        salt: an int or pair of ints that keys the OOV hash.
        **kwargs: `name`, `dtype`.

    Example:
        >>> layer = mk.layers.StringLookup(vocabulary=["a", "b"])
        >>> layer.get_vocabulary()
        ['[UNK]', 'a', 'b']
    """

    _accepts_strings = True

    def __init__(
        self,
        max_tokens=None,
        num_oov_indices=1,
        mask_token=None,
        oov_token=None,
        vocabulary=None,
        idf_weights=None,
        invert=False,
        output_mode="int",
        pad_to_max_tokens=False,
        sparse=False,
        salt=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        where = type(self).__name__
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 1
        ):
            raise ValueError(
                f"{where}: `max_tokens` must be None or an int > 1, got {max_tokens!r}"
            )
        if (
            isinstance(num_oov_indices, bool)
            or not isinstance(num_oov_indices, int)
            or (num_oov_indices < 0)
        ):
            raise ValueError(
                f"{where}: `num_oov_indices` must be an int >= 0, got {num_oov_indices!r}"
            )
        if output_mode == "tf-idf":
            output_mode = "tf_idf"
        self.output_mode = check_output_mode(where, output_mode, LOOKUP_MODES)
        if invert and self.output_mode != "int":
            raise ValueError(f"{where}: `invert=True` needs output_mode='int', got {output_mode!r}")
        if idf_weights is not None and self.output_mode != "tf_idf":
            raise ValueError(f"{where}: `idf_weights` is only used with output_mode='tf_idf'")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError(f"{where}: `pad_to_max_tokens=True` needs `max_tokens`")
        if sparse:
            raise ValueError(f"{where}: `sparse=True` is not supported by minikeras")
        self.max_tokens = max_tokens
        self.num_oov_indices = num_oov_indices
        self.mask_token = None if mask_token is None else self._token(mask_token)
        self.oov_token = None if oov_token is None else self._token(oov_token)
        self.invert = bool(invert)
        self.pad_to_max_tokens = bool(pad_to_max_tokens)
        self.sparse = False
        self.salt = salt
        self._tokens, self._index, self._idf = [], {}, None
        self._has_input_vocabulary = vocabulary is not None
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)
        elif self.output_mode == "tf_idf" and idf_weights is not None:
            raise ValueError(f"{where}: `idf_weights` must come with a `vocabulary`")

    # ------------------------------------------------------------ token kinds

    def _token(self, value):
        """A token as the plain Python value the vocabulary holds (subclasses)."""
        return value

    def _oov_buckets(self, tokens):
        """Which of the `num_oov_indices` OOV indices each OOV token takes."""
        return hash_strings(np.asarray(tokens, dtype=object), self.salt) % self.num_oov_indices

    # -------------------------------------------------------------- vocabulary

    def _oov_start_index(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start_index(self):
        return self._oov_start_index() + self.num_oov_indices

    def _special_tokens(self):
        return [self.mask_token] * self._oov_start_index() + [self.oov_token] * self.num_oov_indices

    def vocabulary_size(self):
        """The number of indices: mask and OOV indices plus the vocabulary.

        Returns:
            An int.

        Example:
            >>> mk.layers.StringLookup(vocabulary=["a", "b"], mask_token="").vocabulary_size()
            4
        """
        return self._token_start_index() + len(self._tokens)

    def get_vocabulary(self, include_special_tokens=True):
        """The vocabulary, a token's position being its index.

        Args:
            include_special_tokens: whether the mask and OOV tokens lead the list.

        Returns:
            A list of tokens.

        Example:
            >>> layer = mk.layers.StringLookup(vocabulary=["a", "b"], mask_token="")
            >>> layer.get_vocabulary(), layer.get_vocabulary(include_special_tokens=False)
            (['', '[UNK]', 'a', 'b'], ['a', 'b'])
        """
        if not include_special_tokens:
            return list(self._tokens)
        return self._special_tokens() + list(self._tokens)

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the vocabulary (and, in `"tf_idf"` mode, its idf weights).

        The vocabulary may start with the special tokens in index order (as
        `get_vocabulary` gives them); otherwise they are added in front.

        Args:
            vocabulary: a list or 1-D array of unique tokens, or the path of a
                text file with one token per line.
            idf_weights: one weight per vocabulary entry, needed in `"tf_idf"`
                mode; the OOV indices get their mean.

        Returns:
            None.

        Raises:
            ValueError: for repeated tokens, a misplaced mask or OOV token, a
                vocabulary over `max_tokens`, or missing or extra idf weights.

        Example:
            >>> layer = mk.layers.StringLookup()
            >>> layer.set_vocabulary(["x", "y"])
            >>> layer(np.array(["y", "z"])).numpy()
            array([2, 0])
        """
        where = f"{type(self).__name__} '{self.name}'"
        if isinstance(vocabulary, str):
            with open(vocabulary, encoding="utf-8") as file:
                vocabulary = file.read().splitlines()
            while vocabulary and vocabulary[-1] == "":
                vocabulary.pop()
        if isinstance(vocabulary, Tensor):
            vocabulary = vocabulary.numpy()
        tokens = [self._token(t) for t in np.asarray(vocabulary, dtype=object).ravel()]
        special = self._special_tokens()
        found_special = tokens[: len(special)] == special
        if found_special:
            tokens = tokens[len(special) :]
        repeated = sorted({t for t, n in collections.Counter(tokens).items() if n > 1}, key=str)
        if repeated:
            raise ValueError(f"{where}: the vocabulary repeats the tokens {repeated}")
        if self.mask_token is not None and self.mask_token in tokens:
            raise ValueError(
                f"{where}: the mask token {self.mask_token!r} may only lead the vocabulary, in "
                f"this order: {special}"
            )
        if self.invert and self.oov_token in tokens:
            raise ValueError(
                f"{where}: the OOV token {self.oov_token!r} may only lead the vocabulary, in this "
                f"order: {special}"
            )
        size = self._token_start_index() + len(tokens)
        if self.max_tokens is not None and size > self.max_tokens:
            raise ValueError(
                f"{where}: a vocabulary of size {size} (with special tokens) is over "
                f"max_tokens={self.max_tokens}"
            )
        idf = None
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError(f"{where}: output_mode='tf_idf' needs `idf_weights`")
            weights = np.asarray(idf_weights, dtype="float64").ravel()
            if weights.size != len(tokens) + (len(special) if found_special else 0):
                raise ValueError(
                    f"{where}: `idf_weights` has {weights.size} entries for a vocabulary of "
                    f"{len(vocabulary)}"
                )
            if not found_special:
                mean = weights.mean() if weights.size else 0.0
                weights = np.concatenate([np.full(len(special), mean), weights])
            idf = weights
        elif idf_weights is not None:
            raise ValueError(f"{where}: `idf_weights` is only used with output_mode='tf_idf'")
        self._set_tokens(tokens, idf)
        self._has_input_vocabulary = True

    def _set_tokens(self, tokens, idf):
        self._tokens = list(tokens)
        start = self._token_start_index()
        self._index = {token: start + i for i, token in enumerate(self._tokens)}
        if idf is not None and self.pad_to_max_tokens:
            idf = np.pad(idf, (0, self.max_tokens - idf.size))
        self._idf = None if idf is None else idf.astype("float32")

    def adapt(self, data, steps=None):
        """Learns the vocabulary from `data`: tokens by decreasing count (ties: larger first).

        The mask and OOV tokens are left out; `max_tokens` keeps the most
        frequent. In `"tf_idf"` mode each token's weight is
        `log(1 + documents / (1 + documents holding it))`, and the OOV
        indices get the mean weight.

        Args:
            data: an array or list (a 1-D one holds one token per document,
                a 2-D one a document per row), or an iterable of batches.
            steps: how many batches of an iterable to read (None: all).

        Returns:
            None.

        Raises:
            ValueError: if the layer was given a vocabulary.

        Example:
            >>> layer = mk.layers.StringLookup()
            >>> layer.adapt(["b", "a", "b", "c", "b", "a"])
            >>> layer.get_vocabulary()
            ['[UNK]', 'b', 'a', 'c']
        """
        if self._has_input_vocabulary:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' was given a vocabulary; it cannot adapt"
            )
        counts, document_counts, documents = collections.Counter(), collections.Counter(), 0
        for batch in batches_for_adapt(data, steps):
            rows = [[self._token(t) for t in row.ravel()] for row in batch.reshape(len(batch), -1)]
            for row in rows:
                counts.update(row)
                document_counts.update(set(row))
            documents += len(rows)
        for special in (self.mask_token, self.oov_token):
            counts.pop(special, None)
        ranked = sorted(counts, key=lambda t: (counts[t], t), reverse=True)
        if self.max_tokens is not None:
            ranked = ranked[: self.max_tokens - self._token_start_index()]
        idf = None
        if self.output_mode == "tf_idf":
            frequency = np.array([document_counts[t] for t in ranked], dtype="float64")
            weights = np.log(1 + documents / (1 + frequency))
            mean = weights.mean() if weights.size else 0.0
            idf = np.concatenate([np.full(self._token_start_index(), mean), weights])
        self._set_tokens(ranked, idf)

    # -------------------------------------------------------------------- call

    def _depth(self):
        return self.max_tokens if self.pad_to_max_tokens else self.vocabulary_size()

    def call(self, inputs):
        values = inputs.numpy() if isinstance(inputs, Tensor) else np.asarray(inputs)
        if self.invert:
            return self._invert(values)
        flat = [self._token(v) for v in values.ravel()]
        codes = np.array([self._index.get(t, -1) for t in flat], dtype=np.int64)
        masked = np.zeros(codes.shape, dtype=bool)
        if self.mask_token is not None:
            masked = np.array([t == self.mask_token for t in flat], dtype=bool)
            codes[masked] = 0
        oov = (codes < 0) & ~masked
        if oov.any() and self.num_oov_indices == 0 and not symbolic.on_placeholders():
            found = sorted({str(t) for t, o in zip(flat, oov) if o})
            raise ValueError(
                f"{type(self).__name__} '{self.name}' has num_oov_indices=0 but got tokens "
                f"outside its vocabulary: {found[:10]}"
            )
        if oov.any():  # (placeholders of a traced call, without OOV indices: index 0)
            oov_tokens = [t for t, o in zip(flat, oov) if o]
            buckets = self._oov_buckets(oov_tokens) if self.num_oov_indices > 1 else 0
            codes[oov] = self._oov_start_index() + np.asarray(buckets, dtype=np.int64)
        codes = codes.reshape(values.shape)
        if self.output_mode == "int":
            return Tensor(codes)
        keep = ~masked.reshape(values.shape)
        mode = "count" if self.output_mode in ("tf_idf", "multi_hot") else self.output_mode
        weights = keep.astype(self.dtype) if mode == "count" else None
        out = encode(codes, mode, self._depth(), self.dtype, weights)
        if self.output_mode == "multi_hot":
            out = (out > 0).astype(self.dtype)
        elif self.output_mode == "one_hot":
            keep = np.atleast_1d(keep)
            if keep.ndim > 1 and keep.shape[-1] == 1:
                keep = keep[..., 0]  # one_hot replaced that axis
            out *= keep[..., None]
        elif self.output_mode == "tf_idf":
            out *= self._idf
        return Tensor(out)

    def _invert(self, values):
        table = np.array(self.get_vocabulary(), dtype=object)
        indices = values.astype(np.int64)
        inside = (indices >= 0) & (indices < table.size)
        out = np.full(indices.shape, self.oov_token, dtype=object)
        out[inside] = table[indices[inside]]
        oov = inside & (indices >= self._oov_start_index()) & (indices < self._token_start_index())
        out[oov] = self.oov_token
        return Tensor(self._inverted_array(out))

    def _inverted_array(self, tokens):
        return tokens

    def compute_output_shape(self, input_shape):
        mode = "count" if self.output_mode == "tf_idf" else self.output_mode
        return encoded_shape(input_shape, mode, self._depth())

    def get_config(self):
        idf = None
        if self._idf is not None:
            idf = self._idf[self._token_start_index() :][: len(self._tokens)].tolist()
        return {
            **super().get_config(),
            "max_tokens": self.max_tokens,
            "num_oov_indices": self.num_oov_indices,
            "mask_token": self.mask_token,
            "oov_token": self.oov_token,
            "vocabulary": list(self._tokens) if self._tokens else None,
            "idf_weights": idf,
            "invert": self.invert,
            "output_mode": self.output_mode,
            "pad_to_max_tokens": self.pad_to_max_tokens,
            "sparse": self.sparse,
            "salt": self.salt,
        }

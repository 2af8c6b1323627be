"""`TextVectorization`: strings to token indices or to bag-of-words vectors."""

import string

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.layer import Layer
from minikeras.layers.preprocessing.encoding import check_choice
from minikeras.layers.preprocessing.lookups import StringLookup

__all__ = ["TextVectorization"]

STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
SPLIT = ("whitespace", "character")
# Keras's default strip regex removes exactly these ASCII punctuation marks.
_STRIP_PUNCTUATION = str.maketrans("", "", string.punctuation)


class TextVectorization(Layer):
    """Turns strings into sequences of token indices, or into multi-hot/count/tf-idf vectors.

    Each string is standardized (by default lower-cased with ASCII
    punctuation removed), split into tokens (by default on whitespace),
    optionally joined into ngrams (space-separated), then looked up in a
    vocabulary learnt by `adapt` or given. In `"int"` mode the vocabulary is
    `["", "[UNK]", ...]`: 0 pads, 1 is any out-of-vocabulary token, and the
    output is padded with 0 (or cut) to `output_sequence_length`, else to the
    longest string of the batch. The other modes give one vector of
    `vocabulary_size()` per string (see `StringLookup`).

    Differences from Keras: a callable `standardize` is called on each
    string (str to str) and a callable `split` on each standardized string
    (str to a list of tokens), where Keras passes whole string tensors;
    `get_config` holds the vocabulary even when learnt; ragged and sparse
    outputs are not supported.

    Args:
        max_tokens: the largest vocabulary size, padding and OOV indices
            included; None for no limit.
        standardize: `"lower_and_strip_punctuation"` (default), `"lower"`,
            `"strip_punctuation"`, None, or a callable.
        split: `"whitespace"` (default), `"character"`, None (each input
            string is a token), or a callable.
        ngrams: None, an int `n` (all ngrams of 1 to `n` tokens), or a tuple
            of ngram sizes.
        output_mode: `"int"` (default), `"multi_hot"`, `"count"` or `"tf_idf"`.
        output_sequence_length: in `"int"` mode, the fixed output length.
        pad_to_max_tokens: in the vector modes, make outputs `max_tokens` wide.
        vocabulary: a list of strings or a text file path; None to `adapt`.
        idf_weights: in `"tf_idf"` mode with a `vocabulary`, one weight each.
        sparse: must be False.
        ragged: must be False.
        encoding: the text encoding of bytes inputs (default `"utf-8"`).
        **kwargs: `name`, `dtype` (of the vector outputs).

    Input shape:
        `(batch,)` or `(batch, 1)` strings (str, bytes or object arrays, or a
        list); with `split=None`, `(batch, tokens)` as well.

    Output shape:
        `"int"`: `(batch, output_sequence_length)` int64 (or the longest
        sequence); other modes: `(batch, vocabulary_size)` floats.

    Raises:
        ValueError: for an unknown mode, standardize or split, bad `ngrams`,
            `output_sequence_length` outside `"int"` mode, or inputs of the
            wrong shape.

    Example:
        >>> layer = mk.layers.TextVectorization(output_sequence_length=4)
        >>> layer.adapt(["The cat sat.", "The dog sat, the end!"])
        >>> layer.get_vocabulary()
        ['', '[UNK]', 'the', 'sat', 'end', 'dog', 'cat']
        >>> layer(np.array(["the CAT ran"])).numpy()
        array([[2, 6, 1, 0]])
    """

    _accepts_strings = True

    def __init__(
        self,
        max_tokens=None,
        standardize="lower_and_strip_punctuation",
        split="whitespace",
        ngrams=None,
        output_mode="int",
        output_sequence_length=None,
        pad_to_max_tokens=False,
        vocabulary=None,
        idf_weights=None,
        sparse=False,
        ragged=False,
        encoding="utf-8",
        **kwargs,
    ):
        super().__init__(**kwargs)
        where = "TextVectorization"
        if not (standardize is None or callable(standardize)):
            check_choice(where, "standardize", standardize, STANDARDIZE)
        if not (split is None or callable(split)):
            check_choice(where, "split", split, SPLIT)
        check_choice(where, "output_mode", output_mode, ("int", "multi_hot", "count", "tf_idf"))
        if isinstance(ngrams, list):
            ngrams = tuple(ngrams)
        if not (
            ngrams is None
            or isinstance(ngrams, int) and not isinstance(ngrams, bool) and ngrams >= 1
            or isinstance(ngrams, tuple) and ngrams and all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in ngrams
            )
        ):  # fmt: skip
            raise ValueError(
                f"{where}: `ngrams` must be None, an int >= 1 or a tuple of them, got {ngrams!r}"
            )
        if output_sequence_length is not None:
            if output_mode != "int":
                raise ValueError(
                    f"{where}: `output_sequence_length` is only used with output_mode='int', "
                    f"got output_mode={output_mode!r}"
                )
            if isinstance(output_sequence_length, bool) or not isinstance(
                output_sequence_length, int
            ) or output_sequence_length < 1:  # fmt: skip
                raise ValueError(
                    f"{where}: `output_sequence_length` must be None or an int >= 1, got "
                    f"{output_sequence_length!r}"
                )
        if sparse or ragged:
            raise ValueError(f"{where}: `sparse` and `ragged` outputs are not supported")
        self.standardize = standardize
        self.split = split
        self.ngrams = ngrams
        self._ngram_sizes = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self.output_mode = output_mode
        self.output_sequence_length = output_sequence_length
        self.encoding = encoding
        self._lookup_layer = StringLookup(
            max_tokens=max_tokens,
            mask_token="",
            vocabulary=vocabulary,
            idf_weights=idf_weights,
            output_mode=output_mode,
            pad_to_max_tokens=pad_to_max_tokens,
            encoding=encoding,
            name=f"{self.name}_lookup",
        )

    # ------------------------------------------------------------ the steps

    def _text(self, value):
        if isinstance(value, (bytes, np.bytes_)):
            return bytes(value).decode(self.encoding)
        if isinstance(value, (str, np.str_)):
            return str(value)
        raise TypeError(
            f"TextVectorization '{self.name}' takes strings, got {value!r} of type "
            f"{type(value).__name__}"
        )

    def _standardized(self, text):
        if callable(self.standardize):
            return self.standardize(text)
        if self.standardize in ("lower", "lower_and_strip_punctuation"):
            text = text.lower()
        if self.standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            text = text.translate(_STRIP_PUNCTUATION)
        return text

    def _tokens(self, text):
        if self.split == "whitespace":
            tokens = text.split()
        elif self.split == "character":
            tokens = list(text)
        else:
            tokens = list(self.split(text))
        return self._ngrams_only(tokens)

    def _documents(self, inputs):
        """The token list of each string in `inputs` (one per batch row)."""
        values = inputs.numpy() if isinstance(inputs, Tensor) else np.asarray(inputs)
        if values.ndim == 0:
            values = values[None]
        if self.split is None:
            rows = values.reshape(len(values), -1)
            docs = [[self._standardized(self._text(v)) for v in row] for row in rows]
            return [self._ngrams_only(doc) for doc in docs]
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1:
            raise ValueError(
                f"TextVectorization '{self.name}' splits strings of shape (batch,) or "
                f"(batch, 1), got shape {values.shape}"
            )
        return [self._tokens(self._standardized(self._text(v))) for v in values]

    def _ngrams_only(self, tokens):
        if self._ngram_sizes is None:
            return tokens
        return [
            " ".join(tokens[i : i + n])
            for n in self._ngram_sizes
            for i in range(len(tokens) - n + 1)
        ]

    # ----------------------------------------------------------- vocabulary

    def adapt(self, data, steps=None):
        """Learns the vocabulary (and idf weights) from strings.

        Args:
            data: a list or array of strings, or an iterable of batches of them.
            steps: how many batches of an iterable to read (None: all).

        Returns:
            None.

        Raises:
            ValueError: if the layer was given a vocabulary.

        Example:
            >>> layer = mk.layers.TextVectorization(output_mode="count")
            >>> layer.adapt(["b a b", "b c"])
            >>> layer(np.array(["b b z"])).numpy()
            array([[1., 2., 0., 0.]], dtype=float32)
        """
        if isinstance(data, (str, bytes)):
            data = [data]
        if isinstance(data, (list, tuple, np.ndarray, Tensor)):
            batches = [data]
        else:
            batches = (b for i, b in enumerate(data) if steps is None or i < steps)
        documents = (np.array(doc, dtype=object) for b in batches for doc in self._documents(b))
        self._lookup_layer.adapt(documents)

    def get_vocabulary(self, include_special_tokens=True):
        """The vocabulary, a token's position being its index.

        Args:
            include_special_tokens: whether `""` (in `"int"` mode) and
                `"[UNK]"` lead the list.

        Returns:
            A list of strings.

        Example:
            >>> mk.layers.TextVectorization(vocabulary=["a"]).get_vocabulary()
            ['', '[UNK]', 'a']
        """
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        """The number of indices, special ones included.

        Returns:
            An int.

        Example:
            >>> mk.layers.TextVectorization(vocabulary=["a", "b"]).vocabulary_size()
            4
        """
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the vocabulary (and, in `"tf_idf"` mode, idf weights), as `StringLookup`'s.

        Args:
            vocabulary: a list of unique strings or a text file path.
            idf_weights: in `"tf_idf"` mode, one weight per entry.

        Returns:
            None.

        Example:
            >>> layer = mk.layers.TextVectorization()
            >>> layer.set_vocabulary(["hello", "world"])
            >>> layer(np.array(["Hello, world!"])).numpy()
            array([[2, 3]])
        """
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights)

    # ----------------------------------------------------------------- call

    def call(self, inputs):
        documents = self._documents(inputs)
        if self.output_mode != "int":
            width = max((len(d) for d in documents), default=0)
            padded = np.full((len(documents), width), "", dtype=object)
            for row, doc in zip(padded, documents):
                row[: len(doc)] = doc
            return self._lookup_layer(padded)  # "" is the mask: dropped from the counts
        length = self.output_sequence_length
        if length is None:
            length = max((len(d) for d in documents), default=0)
        documents = [doc[:length] for doc in documents]
        tokens = np.array([t for doc in documents for t in doc], dtype=object)
        flat = self._lookup_layer(tokens).numpy() if tokens.size else tokens.astype(np.int64)
        ids = np.zeros((len(documents), length), dtype=np.int64)
        start = 0
        for row, doc in zip(ids, documents):  # one lookup for the batch, then the rows
            row[: len(doc)] = flat[start : start + len(doc)]
            start += len(doc)
        return Tensor(ids)

    def compute_output_spec(self, inputs, *args, **kwargs):
        dtype = "int64" if self.output_mode == "int" else self._lookup_layer.dtype  # (as Keras)
        return SymbolicTensor(self.compute_output_shape(inputs.shape), dtype)

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return (input_shape[0], self.output_sequence_length)
        lookup = self._lookup_layer
        depth = lookup.max_tokens if lookup.pad_to_max_tokens else lookup.vocabulary_size()
        return (input_shape[0], depth)

    def get_config(self):
        lookup = self._lookup_layer.get_config()
        return {
            **super().get_config(),
            "max_tokens": lookup["max_tokens"],
            "standardize": self.standardize,
            "split": self.split,
            "ngrams": self.ngrams,
            "output_mode": self.output_mode,
            "output_sequence_length": self.output_sequence_length,
            "pad_to_max_tokens": lookup["pad_to_max_tokens"],
            "vocabulary": lookup["vocabulary"],
            "idf_weights": lookup["idf_weights"],
            "sparse": False,
            "ragged": False,
            "encoding": self.encoding,
        }

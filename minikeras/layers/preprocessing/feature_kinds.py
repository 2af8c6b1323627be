"""The kinds of feature a `FeatureSpace` knows, as its class methods (`FeatureSpace.float()`...).

Each makes a `Feature`: the raw input's dtype, the preprocessing layer (named
`<name>_preprocessor`) and how the space encodes that layer's outputs.
"""

from minikeras.layers.identity import Identity
from minikeras.layers.layer import unique_name
from minikeras.layers.preprocessing.categorical import CategoryEncoding, Hashing
from minikeras.layers.preprocessing.discretization import Discretization
from minikeras.layers.preprocessing.feature_specs import Cross, Feature
from minikeras.layers.preprocessing.hashed_crossing import HashedCrossing
from minikeras.layers.preprocessing.index_lookup import IndexLookup
from minikeras.layers.preprocessing.lookups import IntegerLookup, StringLookup
from minikeras.layers.preprocessing.numerical import Normalization, Rescaling

__all__ = ["FeatureKinds", "cardinality"]


class FeatureKinds:
    """The feature kinds of `FeatureSpace` (its base): class methods that make `Feature`s.

    Example:
        >>> mk.utils.FeatureSpace.string_categorical(name="color").preprocessor.name
        'color_preprocessor'
    """

    @classmethod
    def cross(cls, feature_names, crossing_dim, output_mode="one_hot"):
        """A cross of features: their preprocessed values hashed together into bins.

        Args:
            feature_names: a tuple of two or more feature names.
            crossing_dim: the number of bins.
            output_mode: `"one_hot"` (default, multi-hot encoded) or `"int"`.

        Returns:
            A `Cross`, for the `crosses` argument.

        Example:
            >>> mk.utils.FeatureSpace.cross(("a", "b"), crossing_dim=16).name
            'a_X_b'
        """
        return Cross(feature_names, crossing_dim, output_mode=output_mode)

    @classmethod
    def feature(cls, dtype, preprocessor, output_mode):
        """A feature preprocessed by any layer (one with `adapt` learns from the data).

        Args:
            dtype: the raw input's dtype: `"float32"`, `"int32"` or `"string"`.
            preprocessor: the layer, called on `(batch, 1)` columns.
            output_mode: `"float"`, `"int"` or `"one_hot"`.

        Returns:
            A `Feature`.

        Example:
            >>> layer = mk.layers.Discretization(bin_boundaries=[0.0])
            >>> mk.utils.FeatureSpace.feature("float32", layer, "one_hot").output_mode
            'one_hot'
        """
        return Feature(dtype, preprocessor, output_mode)

    @classmethod
    def float(cls, name=None):
        """Floats used as they are.

        Args:
            name: the feature's name, for its preprocessor's (default: numbered `float`).

        Returns:
            A `Feature` whose preprocessor is an `Identity` layer.

        Example:
            >>> mk.utils.FeatureSpace.float(name="x").preprocessor.name
            'x_preprocessor'
        """
        name = name or unique_name("float")
        return Feature("float32", Identity(name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_rescaled(cls, scale=1.0, offset=0.0, name=None):
        """Floats scaled and shifted: `x * scale + offset` (a `Rescaling` layer).

        Args:
            scale: the factor.
            offset: the shift, added after scaling.
            name: the feature's name, for its preprocessor's.

        Returns:
            A `Feature`.

        Example:
            >>> mk.utils.FeatureSpace.float_rescaled(scale=0.5).preprocessor.scale
            0.5
        """
        name = name or unique_name("float_rescaled")
        layer = Rescaling(scale=scale, offset=offset, name=f"{name}_preprocessor")
        return Feature("float32", layer, "float")

    @classmethod
    def float_normalized(cls, name=None):
        """Floats standardized to zero mean and unit variance (a `Normalization`, adapted).

        Args:
            name: the feature's name, for its preprocessor's.

        Returns:
            A `Feature`.

        Example:
            >>> type(mk.utils.FeatureSpace.float_normalized().preprocessor).__name__
            'Normalization'
        """
        name = name or unique_name("float_normalized")
        return Feature("float32", Normalization(axis=-1, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_discretized(cls, num_bins, bin_boundaries=None, output_mode="one_hot", name=None):
        """Floats put in bins (a `Discretization`): `num_bins` quantile bins learnt by adapt.

        Keras passes both `num_bins` and `bin_boundaries` to its `Discretization`,
        which refuses the pair; here given `bin_boundaries` win (no adapting).

        Args:
            num_bins: the number of bins to learn.
            bin_boundaries: None, or sorted boundaries to use instead.
            output_mode: `"one_hot"` (default) or `"int"` (the bin indices).
            name: the feature's name, for its preprocessor's.

        Returns:
            A `Feature`.

        Example:
            >>> mk.utils.FeatureSpace.float_discretized(4).preprocessor.num_bins
            4
        """
        name = name or unique_name("float_discretized")
        layer = Discretization(
            num_bins=num_bins if bin_boundaries is None else None,
            bin_boundaries=bin_boundaries,
            name=f"{name}_preprocessor",
        )
        return Feature("float32", layer, output_mode)

    @classmethod
    def integer_categorical(
        cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None
    ):
        """Integers indexed by a vocabulary learnt by adapt (an `IntegerLookup`).

        Args:
            max_tokens: None, or the largest vocabulary (OOV indices included).
            num_oov_indices: the indices for values outside the vocabulary (0:
                such a value is an error).
            output_mode: `"one_hot"` (default) or `"int"` (the indices).
            name: the feature's name, for its preprocessor's.

        Returns:
            A `Feature`.

        Example:
            >>> mk.utils.FeatureSpace.integer_categorical(num_oov_indices=0).dtype
            'int32'
        """
        name = name or unique_name("integer_categorical")
        layer = IntegerLookup(
            max_tokens=max_tokens,
            num_oov_indices=num_oov_indices,
            name=f"{name}_preprocessor",
        )
        return Feature("int32", layer, output_mode)

    @classmethod
    def string_categorical(
        cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None
    ):
        """Strings indexed by a vocabulary learnt by adapt (a `StringLookup`).

        Args:
            max_tokens: None, or the largest vocabulary (OOV indices included).
            num_oov_indices: the indices for strings outside the vocabulary.
            output_mode: `"one_hot"` (default) or `"int"` (the indices).
            name: the feature's name, for its preprocessor's.

        Returns:
            A `Feature`.

        Example:
            >>> mk.utils.FeatureSpace.string_categorical().dtype
            'string'
        """
        name = name or unique_name("string_categorical")
        layer = StringLookup(
            max_tokens=max_tokens,
            num_oov_indices=num_oov_indices,
            name=f"{name}_preprocessor",
        )
        return Feature("string", layer, output_mode)

    @classmethod
    def string_hashed(cls, num_bins, output_mode="one_hot", name=None):
        """Strings hashed into `num_bins` bins (a `Hashing` layer; Keras's hash).

        Args:
            num_bins: the number of bins.
            output_mode: `"one_hot"` (default) or `"int"` (the bins).
            name: the feature's name, for its preprocessor's.

        Returns:
            A `Feature`.

        Example:
            >>> mk.utils.FeatureSpace.string_hashed(8).preprocessor.num_bins
            8
        """
        name = name or unique_name("string_hashed")
        layer = Hashing(num_bins=num_bins, name=f"{name}_preprocessor")
        return Feature("string", layer, output_mode)

    @classmethod
    def integer_hashed(cls, num_bins, output_mode="one_hot", name=None):
        """Integers hashed into `num_bins` bins (a `Hashing` layer, on their decimal text).

        Args:
            num_bins: the number of bins.
            output_mode: `"one_hot"` (default) or `"int"` (the bins).
            name: the feature's name, for its preprocessor's.

        Returns:
            A `Feature`.

        Example:
            >>> mk.utils.FeatureSpace.integer_hashed(8).dtype
            'int32'
        """
        name = name or unique_name("integer_hashed")
        layer = Hashing(num_bins=num_bins, name=f"{name}_preprocessor")
        return Feature("int32", layer, output_mode)


def cardinality(key, layer):
    """How many integer values a preprocessor or crosser gives: its one-hot width.

    Args:
        key: the feature's (or cross's) name, for errors.
        layer: its preprocessing layer, or its `HashedCrossing`.

    Returns:
        An int.

    Raises:
        ValueError: for a layer whose width is not known.

    Example:
        >>> from minikeras.layers.preprocessing.feature_kinds import cardinality
        >>> cardinality("c", mk.layers.StringLookup(vocabulary=["a", "b"]))
        3
    """
    if isinstance(layer, IndexLookup):
        return layer.vocabulary_size()
    if isinstance(layer, CategoryEncoding):
        return layer.num_tokens
    if isinstance(layer, Discretization):
        return layer.num_bins if layer.num_bins is not None else len(layer.bin_boundaries) + 1
    if isinstance(layer, (Hashing, HashedCrossing)):
        return layer.num_bins
    raise ValueError(
        f"FeatureSpace: feature '{key}' has output_mode='one_hot', but the width of its "
        f"preprocessor's ({type(layer).__name__}) outputs is not known; use output_mode='int'"
    )

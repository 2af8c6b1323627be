"""What a `FeatureSpace` is told about each feature and each cross: `Feature` and `Cross`.

A `Feature` pairs the dtype of a raw input (`"float32"`, `"int32"` or
`"string"`) with the preprocessing layer that maps it to numbers and the
way `FeatureSpace` encodes that layer's outputs (`"float"` as they are,
`"int"` as they are, `"one_hot"` through a multi-hot `CategoryEncoding`). A
`Cross` names the features whose preprocessed values are hashed together.

Both write and read configs in Keras 3's shape (`module`, `class_name`,
`config`, `registered_name`), so that a `FeatureSpace` config reads alike in
Keras and here; `FeatureSpace` reads them back itself, without the registry.
"""

import numpy as np

from minikeras.layers.layer import Layer
from minikeras.serialization_lib import deserialize_keras_object, serialize_keras_object

__all__ = ["Cross", "Feature", "entry_of", "spec_from_entry"]

_MODULE = "keras.src.layers.preprocessing.feature_space"  # where Keras's classes live
FEATURE_DTYPES = ("float32", "int32", "string")


def _check_mode(owner, output_mode, choices):
    if output_mode not in choices:
        raise ValueError(
            f"{owner}: `output_mode` must be one of {list(choices)}, got {output_mode!r}"
        )
    return output_mode


class Cross:
    """Features crossed by hashing their preprocessed values together (see `HashedCrossing`).

    Args:
        feature_names: a tuple of two or more feature names.
        crossing_dim: the number of hashing bins.
        output_mode: `"one_hot"` (default) or `"int"`.

    Raises:
        ValueError: for fewer than two names, a bad `crossing_dim` or `output_mode`.

    Example:
        >>> mk.utils.FeatureSpace.cross(("a", "b"), crossing_dim=8).name
        'a_X_b'
    """

    def __init__(self, feature_names, crossing_dim, output_mode="one_hot"):
        self.output_mode = _check_mode("FeatureSpace.cross", output_mode, ("int", "one_hot"))
        names = (feature_names,) if isinstance(feature_names, str) else tuple(feature_names)
        if len(names) < 2 or not all(isinstance(n, str) for n in names):
            raise ValueError(
                "FeatureSpace.cross: `feature_names` must be two or more feature names, got "
                f"{feature_names!r}"
            )
        if (
            isinstance(crossing_dim, bool)
            or not isinstance(crossing_dim, (int, np.integer))
            or crossing_dim < 1
        ):
            raise ValueError(
                f"FeatureSpace.cross: `crossing_dim` must be an int >= 1, got {crossing_dim!r}"
            )
        self.feature_names = names
        self.crossing_dim = int(crossing_dim)

    @property
    def name(self):
        """The cross's name: the feature names joined by `"_X_"`."""
        return "_X_".join(self.feature_names)

    def get_config(self):
        """The arguments that rebuild the cross.

        Returns:
            A dict with `feature_names`, `crossing_dim` and `output_mode`.

        Example:
            >>> mk.utils.FeatureSpace.cross(("a", "b"), 8).get_config()["crossing_dim"]
            8
        """
        return {
            "feature_names": self.feature_names,
            "crossing_dim": self.crossing_dim,
            "output_mode": self.output_mode,
        }

    @classmethod
    def from_config(cls, config):
        """Makes a cross from the dict `get_config` returned.

        Args:
            config: the dict.

        Returns:
            A new `Cross`.

        Example:
            >>> cross = mk.utils.FeatureSpace.cross(("a", "b"), 8)
            >>> type(cross).from_config(cross.get_config()).name
            'a_X_b'
        """
        return cls(**config)


class Feature:
    """One feature of a `FeatureSpace`: its input dtype, its preprocessing layer, its encoding.

    Args:
        dtype: the raw input's dtype: `"float32"`, `"int32"` or `"string"`
            (Keras's names; `"string"` inputs are numpy str, bytes or object
            arrays here).
        preprocessor: a layer (or its serialized entry) applied to the raw
            `(batch, 1)` input.
        output_mode: `"float"` or `"int"` (the preprocessor's outputs as they
            are) or `"one_hot"` (its integer outputs, multi-hot encoded).

    Raises:
        ValueError: for a bad `dtype` or `output_mode`.
        TypeError: if `preprocessor` is not a layer.

    Example:
        >>> feature = mk.utils.FeatureSpace.feature(
        ...     dtype="float32", preprocessor=mk.layers.Rescaling(2.0), output_mode="float"
        ... )
        >>> feature.output_mode
        'float'
    """

    def __init__(self, dtype, preprocessor, output_mode):
        self.output_mode = _check_mode(
            "FeatureSpace.feature", output_mode, ("int", "one_hot", "float")
        )
        if dtype not in FEATURE_DTYPES:
            raise ValueError(
                f"FeatureSpace.feature: `dtype` must be one of {list(FEATURE_DTYPES)}, got "
                f"{dtype!r}"
            )
        if isinstance(preprocessor, dict):
            preprocessor = deserialize_keras_object(preprocessor)
        if not isinstance(preprocessor, Layer):
            raise TypeError(
                "FeatureSpace.feature: `preprocessor` must be a layer, got "
                f"{type(preprocessor).__name__}"
            )
        self.dtype = dtype
        self.preprocessor = preprocessor

    def get_config(self):
        """The arguments that rebuild the feature (its preprocessor serialized).

        Returns:
            A dict with `dtype`, `preprocessor` and `output_mode`.

        Example:
            >>> feature = mk.utils.FeatureSpace.float_rescaled(scale=2.0, name="x")
            >>> feature.get_config()["preprocessor"]["class_name"]
            'Rescaling'
        """
        return {
            "dtype": self.dtype,
            "preprocessor": serialize_keras_object(self.preprocessor),
            "output_mode": self.output_mode,
        }

    @classmethod
    def from_config(cls, config):
        """Makes a feature from the dict `get_config` returned.

        Args:
            config: the dict.

        Returns:
            A new `Feature`.

        Example:
            >>> feature = mk.utils.FeatureSpace.float_rescaled(scale=2.0, name="y")
            >>> type(feature).from_config(feature.get_config()).preprocessor.scale
            2.0
        """
        return cls(**config)


def entry_of(spec):
    """A `Feature` or `Cross` as a Keras-shaped entry.

    Args:
        spec: a `Feature` or a `Cross`.

    Returns:
        A dict with `module`, `class_name`, `config` and `registered_name`.

    Example:
        >>> from minikeras.layers.preprocessing.feature_specs import entry_of
        >>> entry_of(mk.utils.FeatureSpace.cross(("a", "b"), 4))["class_name"]
        'Cross'
    """
    name = type(spec).__name__
    config = serialize_keras_object(spec.get_config())
    return {"module": _MODULE, "class_name": name, "config": config, "registered_name": name}


def spec_from_entry(entry, kind):
    """The `Feature` or `Cross` (`kind`) an `entry_of` entry (or a bare config) describes.

    Args:
        entry: the entry, or the config dict alone.
        kind: `Feature` or `Cross`.

    Returns:
        A new `kind`.

    Raises:
        ValueError: if the entry names another class.

    Example:
        >>> from minikeras.layers.preprocessing import feature_specs as specs
        >>> cross = specs.Cross(("a", "b"), 4)
        >>> specs.spec_from_entry(specs.entry_of(cross), specs.Cross).crossing_dim
        4
    """
    if "class_name" in entry:
        if entry["class_name"] != kind.__name__:
            raise ValueError(
                f"FeatureSpace: expected a {kind.__name__} entry, got one of "
                f"{entry['class_name']!r}"
            )
        entry = entry["config"]
    config = dict(entry)
    if kind is Cross:
        config["feature_names"] = tuple(config["feature_names"])
    return kind.from_config(config)

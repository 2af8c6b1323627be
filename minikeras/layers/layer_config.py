"""`LayerConfig`: the part of `Layer` that describes a layer as a config.

`get_config` / `from_config` rebuild a layer from its arguments (Keras 3's
default captures plain constructor arguments, see `auto_config`), and
`get_build_config` / `build_from_config` rebuild its weights' shapes.
`Layer` inherits it; it is not used on its own.
"""

from minikeras import regularizers
from minikeras.layers import auto_config

__all__ = ["LayerConfig", "dtype_of_policy"]


def dtype_of_policy(layer_class, dtype):
    """The dtype of a Keras 3 `DTypePolicy` config, or `dtype` itself if it is none.

    A raw Keras `layer.get_config()` holds its dtype as
    `{"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}}`;
    a layer here has one dtype for its weights and its computations, so a
    policy (or `FloatDTypePolicy`, its other name) of one dtype (`"float32"`,
    `"float64"`) is that dtype, and a mixed-precision (`"mixed_float16"`) or
    quantized policy is refused.

    Args:
        layer_class: the layer's class name, for errors.
        dtype: a dtype, a policy config dict, or None.

    Returns:
        `dtype`, or the policy's dtype name.

    Raises:
        ValueError: for a mixed-precision or quantized policy, or a dict that
            is not a `DTypePolicy` config.

    Example:
        >>> from minikeras.layers.layer_config import dtype_of_policy
        >>> policy = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}}
        >>> dtype_of_policy("Dense", policy)
        'float32'
    """
    name = dtype
    if isinstance(dtype, dict):
        config = dtype.get("config")
        # (FloatDTypePolicy: Keras 3's other name of DTypePolicy, in files of Keras 3.4 and 3.5)
        policy = dtype.get("class_name")
        if policy not in ("DTypePolicy", "FloatDTypePolicy") or not isinstance(config, dict):
            raise ValueError(
                f"{layer_class}: dtype {dtype!r:.200} is not a Keras DTypePolicy of one dtype "
                "(quantized and other policies are not available in minikeras)"
            )
        name = config.get("name")
    if isinstance(name, str) and name.startswith("mixed_"):
        raise ValueError(
            f"{layer_class}: the mixed-precision dtype policy {name!r} is not available in "
            "minikeras (a layer computes in the dtype of its weights); use 'float32'"
        )
    return name


class LayerConfig:
    """The config methods of `Layer` (get_config, from_config and the build config)."""

    def get_config(self):
        """The arguments that rebuild this layer with `from_config`.

        Returns:
            A JSON-friendly dict (with `activity_regularizer` only if one is set).

        Example:
            >>> mk.layers.Layer(name="x").get_config()
            {'name': 'x', 'trainable': True, 'dtype': 'float32'}
        """
        base = {"name": self.name, "trainable": self.trainable, "dtype": self.dtype}
        if self.activity_regularizer is not None:
            base["activity_regularizer"] = regularizers.serialize(self.activity_regularizer)
        if self.__dict__.get("_inputs") is not None:  # a graph model: its layers are its config
            return base
        captured = self.__dict__.get("_auto_config")
        if captured:
            return {**base, **{k: v for k, v in captured.items() if k not in base}}
        if captured is None and self.__dict__.get("_auto_config_problem"):
            extra = auto_config.extra_arguments(type(self))
            if extra:
                raise NotImplementedError(
                    f"{type(self).__name__} '{self.name}' takes constructor arguments {extra} "
                    f"that cannot be captured for its config: "
                    f"{self.__dict__['_auto_config_problem']}. Write get_config() returning "
                    "them (and from_config() if they are not plain values), as in Keras."
                )
        return base

    def get_build_config(self):
        """How the layer was built, for `build_from_config` (Keras 3's entry).

        Returns:
            `{"input_shape": shape}` for a build of one shape,
            `{"shapes_dict": {"<argument>_shape": shape, ...}}` for several, or
            None if the layer is not built or was built by hand without a shape.

        Example:
            >>> dense = mk.layers.Dense(2)
            >>> dense.build((None, 3))
            >>> dense.get_build_config()
            {'input_shape': (None, 3)}
        """
        if not self.built:
            return None
        shapes = self.__dict__.get("_build_shapes_dict")
        if shapes is not None:
            return {"shapes_dict": dict(shapes)}
        shape = self.__dict__.get("_build_input_shape")
        return None if shape is None else {"input_shape": shape}

    def build_from_config(self, config):
        """Builds the layer as `get_build_config` describes.

        Args:
            config: the dict `get_build_config` returned (shapes as tuples or lists).

        Returns:
            None.

        Raises:
            ValueError: for a dict with neither `input_shape` nor `shapes_dict`.

        Example:
            >>> dense = mk.layers.Dense(2)
            >>> dense.build_from_config({"input_shape": [None, 3]})
            >>> dense.kernel.shape
            (3, 2)
        """
        if not config:
            return
        if "shapes_dict" in config:
            shapes = {key: _as_shape(value) for key, value in config["shapes_dict"].items()}
            self.build(**shapes)
        elif "input_shape" in config:
            self.build(_as_shape(config["input_shape"]))
        else:
            raise ValueError(
                f"{type(self).__name__} '{self.name}'.build_from_config: expected "
                f"'input_shape' or 'shapes_dict', got {sorted(config)}"
            )
        self.built = True

    @classmethod
    def from_config(cls, config):
        """Makes a layer from the dict `get_config` returned.

        Args:
            config: the dict.

        Returns:
            A new, unbuilt layer.

        Example:
            >>> mk.layers.Layer.from_config({"name": "y"}).name
            'y'
        """
        return cls(**config)


def _as_shape(value):
    """A shape from a config: lists of sizes become tuples; lists of shapes stay lists."""
    if isinstance(value, (list, tuple)) and all(s is None or isinstance(s, int) for s in value):
        return tuple(value)
    if isinstance(value, (list, tuple)):
        return [_as_shape(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_shape(item) for key, item in value.items()}
    return value

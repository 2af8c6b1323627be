"""`LayerConfig`: the part of `Layer` that describes a layer as a config.

`get_config` / `from_config` rebuild a layer from its arguments (Keras 3's
default captures plain constructor arguments, see `auto_config`), and
`get_build_config` / `build_from_config` rebuild its weights' shapes.
`Layer` inherits it; it is not used on its own.
"""

from minikeras import dtype_policies, regularizers
from minikeras.layers import auto_config

__all__ = ["LayerConfig", "layer_dtype_policy"]


def layer_dtype_policy(layer, dtype):
    """The `DTypePolicy` a layer's `dtype` argument names; errors name the layer.

    Args:
        layer: the layer (its class and name go into errors).
        dtype: None (the global policy, `mk.config.dtype_policy()`), a policy
            name (`"float32"`, `"mixed_float16"`), a numpy dtype, a
            `DTypePolicy`, or a Keras policy config
            `{"class_name": "DTypePolicy", "config": {"name": ...}}`
            (`FloatDTypePolicy`, its other name, too).

    Returns:
        A `DTypePolicy`.

    Raises:
        ValueError: for a name that is no policy, a bfloat16 policy, a
            quantized policy, or a dict that is not a `DTypePolicy` config.

    Example:
        >>> from minikeras.layers.layer_config import layer_dtype_policy
        >>> policy = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}}
        >>> layer_dtype_policy(mk.layers.Layer(), policy)
        <DTypePolicy "float32">
    """
    try:
        return dtype_policies.get(dtype)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{type(layer).__name__} '{layer.name}': {error}") from None


class LayerConfig:
    """The config methods of `Layer` (get_config, from_config and the build config)."""

    def get_config(self):
        """The arguments that rebuild this layer with `from_config`.

        The dtype policy is written by its name (`"float32"`, `"mixed_float16"`);
        Keras 3 writes the policy's config dict (`dtype_policies.serialize`).
        Both read either form.

        Returns:
            A JSON-friendly dict (with `activity_regularizer` only if one is set).

        Example:
            >>> mk.layers.Layer(name="x").get_config()
            {'name': 'x', 'trainable': True, 'dtype': 'float32'}
        """
        base = {"name": self.name, "trainable": self.trainable, "dtype": self._dtype_policy.name}
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

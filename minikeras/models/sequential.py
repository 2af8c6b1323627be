"""`Sequential`: a plain stack of layers, each feeding the next."""

from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.layer import Layer
from minikeras.models.model import Model

__all__ = ["Sequential"]


class Sequential(Model):
    """A linear stack of layers.

    Args:
        layers: a list of layers; it may start with `minikeras.Input(shape)`
            (or the first layer may get Keras 2's `input_shape=`), which builds
            the model at once.
        name: the model's name.
        **kwargs: `trainable`, `dtype`.

    Raises:
        TypeError: if an element is not a layer.

    Example:
        >>> from minikeras.layers import Dense, Input
        >>> model = Sequential([Input(shape=(3,)), Dense(4, activation="relu"), Dense(2)])
        >>> model.built, model(np.ones((5, 3))).shape
        (True, (5, 2))
    """

    def __init__(self, layers=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._layers = []
        self._input_shape = None
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self):
        """The layers in order (a copy: change the stack with `add` and `pop`)."""
        return list(self._layers)

    def add(self, layer):
        """Appends a layer (or, first, an `Input` giving the input shape).

        Args:
            layer: a `Layer`, or a `minikeras.Input(...)` before any layer.

        Returns:
            None.

        Raises:
            TypeError: if `layer` is not a layer.
            ValueError: for an `Input` after layers, or a duplicate name.

        Example:
            >>> from minikeras.layers import Dense
            >>> model = Sequential(); model.add(Dense(2)); len(model.layers)
            1
        """
        if isinstance(layer, SymbolicTensor):
            if self._layers:
                raise ValueError(f"Sequential '{self.name}': an Input must come first")
            self._input_shape = layer.shape
            return
        if not isinstance(layer, Layer):
            raise TypeError(
                f"Sequential '{self.name}'.add expects a Layer, got {type(layer).__name__}"
            )
        if any(existing.name == layer.name for existing in self._layers):
            raise ValueError(
                f"Sequential '{self.name}' already has a layer named {layer.name!r}; "
                "layer names must be unique"
            )
        if not self._layers and self._input_shape is None:
            self._input_shape = layer._input_shape_arg
        self._layers.append(layer)
        if self._input_shape is not None:
            self.built = False
            self.build(self._input_shape)

    def pop(self):
        """Removes the last layer and returns it.

        Returns:
            The removed `Layer`.

        Raises:
            IndexError: if there is no layer.

        Example:
            >>> from minikeras.layers import Dense
            >>> model = Sequential([Dense(2), Dense(3)])
            >>> model.pop().units, len(model.layers)
            (3, 1)
        """
        if not self._layers:
            raise IndexError(f"Sequential '{self.name}'.pop: there is no layer to pop")
        return self._layers.pop()

    def call(self, inputs, training=None, mask=None):
        outputs = inputs
        for layer in self._layers:
            layer_inputs = outputs
            outputs = layer(layer_inputs, training=training, mask=mask)
            # Each layer's output mask goes to the next (see Layer.compute_mask).
            mask = layer.compute_mask(layer_inputs, mask)
        object.__setattr__(self, "_output_mask", mask)
        return outputs

    def get_config(self):
        """The layers' configs in order, after an `InputLayer` entry if the input shape is known.

        Returns:
            A JSON-friendly dict with Keras's keys.

        Raises:
            ValueError: if a layer cannot be serialized (see `minikeras.saving`).

        Example:
            >>> from minikeras.layers import Dense, Input
            >>> config = Sequential([Input((3,)), Dense(2)]).get_config()
            >>> [entry["class_name"] for entry in config["layers"]]
            ['InputLayer', 'Dense']
        """
        from minikeras.saving import serialize_layer

        layers = [serialize_layer(layer) for layer in self._layers]
        if self._input_shape is not None:
            shape = {"batch_shape": list(self._input_shape), "dtype": self.dtype}
            layers.insert(0, {"class_name": "InputLayer", "config": shape})
        return {**super().get_config(), "layers": layers}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """Makes a Sequential from the dict `get_config` returned.

        Args:
            config: the dict.
            custom_objects: optional dict of name -> class or function.

        Returns:
            A new Sequential, built if the config has an input shape.

        Example:
            >>> from minikeras.layers import Dense, Input
            >>> model = Sequential([Input((3,)), Dense(2)])
            >>> Sequential.from_config(model.get_config()).built
            True
        """
        from minikeras.layers.input_layer import Input
        from minikeras.saving import deserialize_layer

        config = dict(config)
        layers = []
        for entry in config.pop("layers", []):
            if isinstance(entry, dict) and entry.get("class_name") == "InputLayer":
                batch_shape = entry.get("config", {}).get("batch_shape")
                layers.append(Input(batch_shape[1:], batch_shape[0], entry["config"].get("dtype")))
            else:
                layers.append(deserialize_layer(entry, custom_objects))
        return cls(layers=layers, **config)

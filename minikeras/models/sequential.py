"""`Sequential`: a plain stack of layers, each feeding the next."""

from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.layer import Layer
from minikeras.models.model import Model


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

    def call(self, inputs, training=None):
        outputs = inputs
        for layer in self._layers:
            outputs = layer(outputs, training=training)
        return outputs

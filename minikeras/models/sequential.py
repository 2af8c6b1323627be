"""`Sequential`: a plain stack of layers, each feeding the next."""

from minikeras.layers.input_layer import Input, SymbolicTensor
from minikeras.layers.inputs import InputLayer, keras_dtype_name
from minikeras.layers.layer import Layer
from minikeras.models.graph import matched_rank
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
        >>> model = mk.Sequential([Input(shape=(3,)), Dense(4, activation="relu"), Dense(2)])
        >>> model.built, model(np.ones((5, 3))).shape
        (True, (5, 2))
    """

    _summary_shows_inputs = False  # as in Keras
    _replays_calls = True  # under a tape (models.replayed_call)
    _layers_in_keras_order = None  # its layers' own order (add, pop) orders its weights

    def __init__(self, layers=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        self._layers = []
        self._nodes = []  # each layer's symbolic call, once the input shape is known
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self):
        """The layers in order (a copy: change the stack with `add` and `pop`).

        No `InputLayer`, as in Keras: an `Input` (or `InputLayer`) given first
        sets the input shape.
        """
        return list(self._layers)

    @property
    def operations(self):
        """As `layers`: a Sequential's graph is its stack."""
        return self.layers

    def add(self, layer, rebuild=True):
        """Appends a layer (or, first, an `Input` giving the input shape).

        Once the input shape is known (an `Input` first, or a first layer
        given `input_shape=`), each added layer is built at once and its
        output shape worked out from its `compute_output_shape`: no data runs
        through the stack.

        Args:
            layer: a `Layer`, or a `minikeras.Input(...)` (or an `InputLayer`)
                before any layer.
            rebuild: accepted for Keras's signature; the stack is always kept built.

        Returns:
            None.

        Raises:
            TypeError: if `layer` is not a layer.
            ValueError: for an `Input` after layers, a duplicate name, or a
                layer that does not fit the previous layer's output shape.

        Example:
            >>> model = mk.Sequential([mk.Input((None, 8))])
            >>> model.add(mk.layers.Conv1D(4, 3))
            >>> model.output_shape
            (None, None, 4)
        """
        if isinstance(layer, InputLayer):  # (Keras's other way to give the input shape)
            layer = layer.output
        if isinstance(layer, SymbolicTensor):
            if self._layers or self._inputs is not None:
                raise ValueError(f"Sequential '{self.name}': an Input must come first")
            self._inputs = self._outputs = layer
            self.built = False
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
        if not self._layers and self._inputs is None and layer._input_shape_arg is not None:
            self._inputs = self._outputs = Input(batch_shape=layer._input_shape_arg)
        self._layers.append(layer)
        if self._inputs is not None:
            try:
                self._extend_graph(layer)
            except BaseException:
                self._layers.pop()
                raise

    def _extend_graph(self, layer):
        """Calls `layer` on the stack's symbolic output: builds it, records its output."""
        outputs = layer(self._outputs)
        if not isinstance(outputs, SymbolicTensor):
            layer._inbound_nodes.remove(outputs[0].node)
            raise ValueError(
                f"Sequential '{self.name}': every layer must return one tensor, and "
                f"{type(layer).__name__} '{layer.name}' returns {len(outputs)}; use the "
                "functional API for layers with several outputs"
            )
        self._nodes.append(outputs.node)
        self._outputs = outputs
        self.built = True
        object.__setattr__(self, "_output_shape", outputs.shape)

    def pop(self, rebuild=True):
        """Removes the last layer and returns it.

        Args:
            rebuild: accepted for Keras's signature; the stack stays built.

        Returns:
            The removed `Layer`.

        Raises:
            IndexError: if there is no layer.

        Example:
            >>> model = mk.Sequential([mk.Input((4,)), mk.layers.Dense(2), mk.layers.Dense(3)])
            >>> model.pop().units, model.output_shape
            (3, (None, 2))
        """
        if not self._layers:
            raise IndexError(f"Sequential '{self.name}'.pop: there is no layer to pop")
        layer = self._layers.pop()
        if self._nodes:
            node = self._nodes.pop()
            if node in layer._inbound_nodes:
                layer._inbound_nodes.remove(node)
            self._outputs = self._nodes[-1].outputs if self._nodes else self._inputs
            object.__setattr__(self, "_output_shape", self._outputs.shape)
        return layer

    def build(self, input_shape=None):
        """Builds every layer for inputs of `input_shape`, from shapes alone (no data runs).

        Args:
            input_shape: a tuple, batch axis first (`None` for unknown sizes).

        Returns:
            None.

        Raises:
            ValueError: if a layer does not fit the shape coming to it, or the
                model was given another input shape before.

        Example:
            >>> model = mk.Sequential([mk.layers.Dense(4), mk.layers.Dense(2)])
            >>> model.build((None, 3))
            >>> model.output_shape, model.count_params()
            ((None, 2), 26)
        """
        if self._inputs is not None:
            if input_shape is not None and not _compatible(self._inputs.shape, input_shape):
                raise ValueError(
                    f"Sequential '{self.name}' has input shape {self._inputs.shape}, and "
                    f"cannot be built for {tuple(input_shape)}"
                )
            self.built = True
            return
        if input_shape is None:
            raise ValueError(
                f"Sequential '{self.name}'.build needs an input shape, or an Input first"
            )
        if isinstance(input_shape, list) and input_shape and isinstance(input_shape[0], tuple):
            raise ValueError(f"Sequential '{self.name}' takes one input; got shapes {input_shape}")
        # The batch axis is left open, except for a stateful layer (nested ones too), which
        # is built for one batch size (as Keras keeps the batch size it is built with).
        stateful = any(_holds_stateful(layer) for layer in self._layers)
        batch = tuple(input_shape)[0] if stateful else None
        self._inputs = self._outputs = Input(batch_shape=(batch, *tuple(input_shape)[1:]))
        for layer in self._layers:
            self._extend_graph(layer)
        self.built = True

    def call(self, inputs, training=None, mask=None):
        if self._inputs is not None:  # (data of shape (batch,) feeds Input((1,)), as in Keras)
            inputs = matched_rank(self._inputs.shape, inputs)
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
            >>> config = mk.Sequential([Input((3,)), Dense(2)]).get_config()
            >>> [entry["class_name"] for entry in config["layers"]]
            ['InputLayer', 'Dense']
        """
        from minikeras.saving import serialize_layer
        from minikeras.saving.registry import nested_configs

        with nested_configs():  # a custom layer is rebuilt with from_config's custom_objects
            layers = [serialize_layer(layer) for layer in self._layers]
        if self._inputs is not None:
            dtype = keras_dtype_name(self._inputs.dtype)
            shape = {"batch_shape": list(self._inputs.shape), "dtype": dtype}
            layers.insert(0, {"class_name": "InputLayer", "config": shape})
        return {**Layer.get_config(self), "layers": layers}

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
            >>> model = mk.Sequential([Input((3,)), Dense(2)])
            >>> mk.Sequential.from_config(model.get_config()).built
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


def _compatible(known, shape):
    shape = tuple(shape)
    return len(known) == len(shape) and all(
        a is None or b is None or a == b for a, b in zip(known[1:], shape[1:])
    )


def _holds_stateful(layer):
    """Whether `layer` is stateful or holds one that is (in a nested model or a wrapper)."""
    if getattr(layer, "stateful", False) is True:
        return True
    inner = list(layer.layers) if isinstance(layer, Model) else []  # (a walk: models only)
    wrapped = layer.__dict__.get("layer")  # TimeDistributed and the like
    if isinstance(wrapped, Layer):
        inner.append(wrapped)
    return any(_holds_stateful(sub) for sub in inner)

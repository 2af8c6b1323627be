"""`Wrapper`: the base class of layers that hold one other layer and change what it does."""

from minikeras.layers.layer import Layer
from minikeras.layers.serialization import deserialize, serialize

__all__ = ["Wrapper"]


class Wrapper(Layer):
    """Abstract base class of the layers that wrap another layer (Keras's `Wrapper`).

    It keeps the wrapped layer as `layer`, builds it on the wrapper's input
    shape, and writes it into the wrapper's config (and reads it back);
    a subclass writes `call`. `TimeDistributed` and `SpectralNormalization`
    are wrappers; `Bidirectional` is not (in Keras neither).

    Args:
        layer: the `Layer` instance to wrap.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        What the subclass takes.

    Output shape:
        What the subclass gives.

    Raises:
        ValueError: if `layer` is not a `Layer` instance.
        NotImplementedError: when called, unless a subclass writes `call`.

    Example:
        >>> class Doubled(mk.layers.Wrapper):
        ...     def call(self, inputs):
        ...         return 2.0 * self.layer(inputs)
        >>> wrapper = Doubled(mk.layers.Dense(3, kernel_initializer="ones"))
        >>> wrapper(np.ones((1, 2))).numpy()
        array([[4., 4., 4.]], dtype=float32)
        >>> wrapper.get_config()["layer"]["class_name"]
        'Dense'
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(
                f"{type(self).__name__}: `layer` must be a Layer instance, got {layer!r:.100}"
            )
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape=None):
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True

    def call(self, inputs, *args, **kwargs):
        raise NotImplementedError(
            f"{type(self).__name__} '{self.name}' has no call(): Wrapper is an abstract base "
            "class; subclass it and write call() (TimeDistributed and SpectralNormalization do)"
        )

    def get_config(self):
        return {**super().get_config(), "layer": serialize(self.layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        # Built by this layer's build, so that its weights come where get_weights puts them.
        entry = {key: value for key, value in config["layer"].items() if key != "build_config"}
        config["layer"] = deserialize(entry, custom_objects)
        return cls(**config)

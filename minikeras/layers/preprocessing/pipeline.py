"""`Pipeline`: a plain layer that applies a list of layers one after the other."""

from minikeras.layers.layer import Layer
from minikeras.layers.serialization import deserialize, serialize

__all__ = ["Pipeline"]


class Pipeline(Layer):
    """Applies `layers` in order: a preprocessing or augmentation pipeline as one layer.

    Unlike a `Sequential` model it is a plain layer: it goes inside a model
    or in front of one, and its config is only its layers and name (as in
    Keras). `training` and a mask are given to each layer that takes them;
    each layer's output mask goes to the next, and the inputs' mask passes
    to the outputs. Called without `training`, it and the random layers in
    it augment, as Keras's do; `training=False` (what `predict` passes)
    leaves images unchanged.

    Args:
        layers: a list of `Layer` instances.
        name: the layer's name.

    Input shape:
        What the first layer takes.

    Output shape:
        What the last layer gives.

    Raises:
        ValueError: if `layers` is not a list of layers (or a config has no list).

    Example:
        >>> augment = mk.layers.Pipeline([
        ...     mk.layers.Rescaling(1 / 255),
        ...     mk.layers.RandomInvert(factor=(1.0, 1.0), value_range=(0, 1)),
        ... ])
        >>> images = np.full((1, 2, 2, 1), 51.0)
        >>> augment(images, training=False).numpy().ravel(), augment(images).numpy().ravel()
        (array([0.2, 0.2, 0.2, 0.2], dtype=float32), array([0.8, 0.8, 0.8, 0.8], dtype=float32))
    """

    supports_masking = True
    # The list itself, an attribute named as Keras's property: Keras's files keep the
    # layers' weights under `<pipeline>/layers/<layer>`, the path of this attribute.
    layers = None

    def __init__(self, layers, name=None):
        if not isinstance(layers, (list, tuple)) or not all(isinstance(x, Layer) for x in layers):
            raise ValueError(
                f"Pipeline: `layers` must be a list of Layer instances, got {layers!r:.100}"
            )
        super().__init__(name=name)
        self.layers = list(layers)

    def build(self, input_shape):
        shape = input_shape
        for layer in self.layers:
            if not layer.built:
                layer.build(shape)
                layer.built = True
            shape = layer.compute_output_shape(shape)

    def call(self, inputs, training=True, mask=None):
        for layer in self.layers:
            outputs = layer(inputs, training=training, mask=mask)
            mask = getattr(outputs, "_keras_mask", None)
            inputs = outputs
        return inputs

    def compute_output_shape(self, input_shape):
        shape = input_shape
        for layer in self.layers:
            shape = layer.compute_output_shape(shape)
        return shape

    def get_config(self):
        return {"layers": [serialize(layer) for layer in self.layers], "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError(
                f"Pipeline: a config needs 'layers', a list of layer entries, got {layers!r:.100}"
            )
        # Built by this layer's build, so that their weights come where get_weights puts them.
        entries = [{k: v for k, v in entry.items() if k != "build_config"} for entry in layers]
        return cls(
            [deserialize(entry, custom_objects) for entry in entries], name=config.get("name")
        )

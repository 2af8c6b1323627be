"""ConvNeXt (Liu et al., 2022): a ResNet modernized step by step towards a vision transformer.

A stem (a 4x4 convolution of stride 4, layer normalization) and three
downsampling blocks (layer normalization, a 2x2 convolution of stride 2),
each followed by a stage of blocks: a 7x7 depthwise convolution, layer
normalization, two pointwise `Dense` layers (4x wider between them, GELU),
a learnt per-channel `LayerScale`, and the input added back (through
`StochasticDepth` when its rate is positive; Keras's ConvNeXts use none).

With `include_preprocessing=True` (the default) the model takes pixels in
0..255 and normalizes them with ImageNet's mean and variance (a
`Normalization` given them as constants); `preprocess_input` returns its
input as it is, as Keras's does. Layer names, shapes and weights match
Keras's `keras.applications.ConvNeXtTiny` etc.; the layers are named after
the model (`convnext_tiny_stage_0_block_0_depthwise_conv`), as in Keras.
Only `"channels_last"` is supported, as in Keras.
"""

import numpy as np

from minikeras import config, initializers, layers, ops, random
from minikeras.applications import builder, imagenet_utils
from minikeras.models import Sequential

__all__ = [
    "ConvNeXtBase",
    "ConvNeXtLarge",
    "ConvNeXtSmall",
    "ConvNeXtTiny",
    "ConvNeXtXLarge",
    "LayerScale",
    "StochasticDepth",
    "decode_predictions",
    "preprocess_input",
]

# variant: (blocks per stage, channels per stage)
VARIANTS = {
    "tiny": ((3, 3, 9, 3), (96, 192, 384, 768)),
    "small": ((3, 3, 27, 3), (96, 192, 384, 768)),
    "base": ((3, 3, 27, 3), (128, 256, 512, 1024)),
    "large": ((3, 3, 27, 3), (192, 384, 768, 1536)),
    "xlarge": ((3, 3, 27, 3), (256, 512, 1024, 2048)),
}
LAYER_SCALE_INIT_VALUE = 1e-6
DROP_PATH_RATE = 0.0  # the last block's; Keras's ConvNeXts drop no path
EPSILON = 1e-6


class StochasticDepth(layers.Layer):
    """Drops the whole residual branch of random samples while training (Huang et al., 2016).

    Each sample is kept with probability `1 - drop_path_rate`, then divided
    by it so that the expected value is unchanged; outside training the
    inputs pass as they are. Keras's `keras.applications.convnext.StochasticDepth`.

    Args:
        drop_path_rate: the probability of dropping a sample's branch, in `[0, 1)`.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape, the batch first.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: if `drop_path_rate` is not in `[0, 1)`.

    Example:
        >>> layer = mk.applications.convnext.StochasticDepth(0.5)
        >>> layer(np.ones((2, 3))).numpy()
        array([[1., 1., 1.],
               [1., 1., 1.]], dtype=float32)
        >>> mk.utils.set_random_seed(0)
        >>> sorted(set(layer(np.ones((8, 3)), training=True).numpy().ravel().tolist()))
        [0.0, 2.0]
    """

    def __init__(self, drop_path_rate, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= drop_path_rate < 1:
            raise ValueError(
                f"StochasticDepth: `drop_path_rate` must be in [0, 1), got {drop_path_rate!r}"
            )
        self.drop_path_rate = drop_path_rate

    def call(self, inputs, training=None):
        if not training or self.drop_path_rate == 0:
            return inputs
        keep_probability = 1 - self.drop_path_rate
        shape = (inputs.shape[0],) + (1,) * (len(inputs.shape) - 1)
        keep = random.generator().random(shape) < keep_probability
        return ops.multiply(inputs, (keep / keep_probability).astype(inputs.dtype))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "drop_path_rate": self.drop_path_rate}


class LayerScale(layers.Layer):
    """Multiplies the last axis by a learnt vector `gamma`, initialized to `init_values`.

    Keras's `keras.applications.convnext.LayerScale` (Touvron et al., 2021):
    a small `init_values` lets each residual branch start almost switched off.

    Args:
        init_values: the initial value of every entry of `gamma`.
        projection_dim: the size of the inputs' last axis (and of `gamma`).
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape whose last axis is `projection_dim`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: if the inputs' last axis is not `projection_dim`.

    Example:
        >>> layer = mk.applications.convnext.LayerScale(0.5, 2)
        >>> layer(np.array([[2.0, 4.0]])).numpy()
        array([[1., 2.]], dtype=float32)
    """

    def __init__(self, init_values, projection_dim, **kwargs):
        super().__init__(**kwargs)
        self.init_values = init_values
        self.projection_dim = projection_dim

    def build(self, input_shape):
        self.compute_output_shape(input_shape)
        # Unnamed, as in Keras (where it is called "variable").
        self.gamma = self.add_weight(
            shape=(self.projection_dim,),
            initializer=initializers.Constant(self.init_values),
            trainable=True,
        )

    def call(self, inputs):
        return ops.multiply(inputs, self.gamma)

    def compute_output_shape(self, input_shape):
        if input_shape[-1] is not None and input_shape[-1] != self.projection_dim:
            raise ValueError(
                f"LayerScale '{self.name}' expected inputs with last axis {self.projection_dim}, "
                f"got shape {tuple(input_shape)}"
            )
        return tuple(input_shape)

    def get_config(self):
        return {
            **super().get_config(),
            "init_values": self.init_values,
            "projection_dim": self.projection_dim,
        }


def _block(x, channels, drop_path_rate, name):
    """Depthwise 7x7, layer norm, Dense 4x + GELU, Dense back, LayerScale, residual."""
    inputs = x
    x = layers.Conv2D(channels, 7, padding="same", groups=channels, name=f"{name}_depthwise_conv")(
        x
    )
    x = layers.LayerNormalization(epsilon=EPSILON, name=f"{name}_layernorm")(x)
    x = layers.Dense(4 * channels, name=f"{name}_pointwise_conv_1")(x)
    x = layers.Activation("gelu", name=f"{name}_gelu")(x)
    x = layers.Dense(channels, name=f"{name}_pointwise_conv_2")(x)
    x = LayerScale(LAYER_SCALE_INIT_VALUE, channels, name=f"{name}_layer_scale")(x)
    if drop_path_rate:
        x = StochasticDepth(drop_path_rate, name=f"{name}_stochastic_depth")(x)
    else:
        x = layers.Activation("linear", name=f"{name}_identity")(x)
    return ops.add(inputs, x)


def _downsampling(channels, stage, name):
    """The stem (stage 0) or a downsampling block, a `Sequential` named as in Keras."""
    if stage == 0:
        return Sequential(
            [
                layers.Conv2D(channels, 4, strides=4, name=f"{name}_stem_conv"),
                layers.LayerNormalization(epsilon=EPSILON, name=f"{name}_stem_layernorm"),
            ],
            name=f"{name}_stem",
        )
    i = stage - 1
    return Sequential(
        [
            layers.LayerNormalization(epsilon=EPSILON, name=f"{name}_downsampling_layernorm_{i}"),
            layers.Conv2D(channels, 2, strides=2, name=f"{name}_downsampling_conv_{i}"),
        ],
        name=f"{name}_downsampling_block_{i}",
    )


def _convnext(variant, arguments):
    """Builds ConvNeXt `variant` (`"tiny"`..`"xlarge"`) from its function's `arguments`."""
    model_name = f"ConvNeXt{variant.capitalize() if variant != 'xlarge' else 'XLarge'}"
    depths, widths = VARIANTS[variant]
    include_top, weights, name = arguments["include_top"], arguments["weights"], arguments["name"]
    activation = arguments["classifier_activation"]
    if config.image_data_format() == "channels_first":
        raise ValueError(
            f"{model_name} does not support the 'channels_first' image data format (nor does "
            "Keras's); set mk.config.set_image_data_format('channels_last')"
        )
    builder.check_arguments(
        model_name, weights, include_top, arguments["classes"], arguments["pooling"], activation
    )
    if weights == "imagenet" and f"convnext_{variant}" not in name:
        raise ValueError(
            f"{model_name}: with weights='imagenet' the model's name must contain "
            f"'convnext_{variant}' (the layers are named after it); got name={name!r}"
        )
    input_shape = builder.obtain_input_shape(
        arguments["input_shape"], 224, 32, include_top, weights
    )
    top = ".h5" if include_top else "_notop.h5"
    path = builder.weights_path(model_name, weights, f"convnext_{variant}{top}")
    image = builder.image_input(arguments["input_tensor"], input_shape)
    x = image
    if arguments["include_preprocessing"] and input_shape[-1] == 3:
        x = layers.Normalization(
            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
            variance=[(0.229 * 255) ** 2, (0.224 * 255) ** 2, (0.225 * 255) ** 2],
            name=f"{name}_prestem_normalization",
        )(x)
    drop_path_rates = np.linspace(0.0, DROP_PATH_RATE, sum(depths))
    index = 0
    for stage, (depth, channels) in enumerate(zip(depths, widths)):
        x = _downsampling(channels, stage, name)(x)
        for block in range(depth):
            rate = float(drop_path_rates[index + block])
            x = _block(x, channels, rate, f"{name}_stage_{stage}_block_{block}")
        index += depth
    if include_top:
        x = layers.GlobalAveragePooling2D(name=f"{name}_head_gap")(x)
        x = layers.LayerNormalization(epsilon=EPSILON, name=f"{name}_head_layernorm")(x)
        x = layers.Dense(arguments["classes"], activation=activation, name=f"{name}_head_dense")(x)
    else:
        x = builder.classifier_or_pooling(x, False, arguments["pooling"], 0, None, {})
        x = layers.LayerNormalization(epsilon=EPSILON)(x)  # also without pooling, as Keras
    return builder.finish(arguments["input_tensor"], image, x, name, path)


def _application(variant):
    """The function `ConvNeXt{Variant}`, its docstring written once for all five."""
    depths, widths = VARIANTS[variant]
    model_name = f"ConvNeXt{variant.capitalize() if variant != 'xlarge' else 'XLarge'}"

    def application(
        include_top=True,
        include_preprocessing=True,
        weights="imagenet",
        input_tensor=None,
        input_shape=None,
        pooling=None,
        classes=1000,
        classifier_activation="softmax",
        name=f"convnext_{variant}",
    ):
        arguments = {"include_top": include_top, "weights": weights, "pooling": pooling}
        arguments.update(input_tensor=input_tensor, input_shape=input_shape, classes=classes)
        arguments.update(classifier_activation=classifier_activation, name=name)
        arguments.update(include_preprocessing=include_preprocessing)
        return _convnext(variant, arguments)

    application.__name__ = application.__qualname__ = model_name
    # The larger variants take seconds to initialize: their examples are not run.
    skip = "" if variant == "tiny" else "  # doctest: +SKIP"
    application.__doc__ = f"""Instantiates {model_name} (Keras's `keras.applications.{model_name}`).

    Four stages of {", ".join(map(str, depths))} blocks with {", ".join(map(str, widths))}
    channels. With `include_preprocessing` the model takes pixels in 0..255 and
    normalizes them itself. Without the top, the output (pooled or not) ends with a
    layer normalization, as in Keras.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    `convnext_{variant}[_notop].h5` from Keras's cache (`~/.keras/models`) if it is
    there, else raises. An unknown `pooling` is an error (Keras ignores it).

    Args:
        include_top: whether to include the classifier head (`{{name}}_head_gap`,
            `_head_layernorm`, `_head_dense`).
        include_preprocessing: whether the model starts with its input
            normalization (only added for 3 channels).
        weights: None (random initialization), `"imagenet"`, or the path of a
            weights file to load (a Keras `.weights.h5` or `.keras` file, or a
            minikeras weights file).
        input_tensor: optional symbolic tensor (from `mk.Input`) to build on.
        input_shape: optional shape tuple of 3 (channels last), sides at least 32;
            with the top and ImageNet weights it must be (224, 224, 3).
        pooling: without the top: None (the 4D feature map), `"avg"` or
            `"max"` (global pooling to a 2D output).
        classes: number of classes of the top.
        classifier_activation: the top's activation (only None or
            `"softmax"` with pretrained weights).
        name: the model's name, which also prefixes its layers' names; with
            ImageNet weights it must contain `"convnext_{variant}"`.

    Returns:
        A `Model`.

    Raises:
        ValueError: for a bad `weights`, `classes`, `pooling`, `input_shape`,
            `classifier_activation` or `name`, and under `"channels_first"`.
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.{model_name}({skip}
        ...     weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg"
        ... )
        >>> model.output_shape{skip}
        (None, {widths[-1]})
    """
    return application


ConvNeXtTiny = _application("tiny")
ConvNeXtSmall = _application("small")
ConvNeXtBase = _application("base")
ConvNeXtLarge = _application("large")
ConvNeXtXLarge = _application("xlarge")


def preprocess_input(x, data_format=None):
    """Returns `x` as it is: ConvNeXts normalize their inputs themselves.

    Kept, as in Keras, so that every family has one.

    Args:
        x: a numpy array or tensor of images in 0..255.
        data_format: unused (`"channels_last"`, `"channels_first"` or None).

    Returns:
        `x`, unchanged.

    Example:
        >>> mk.applications.convnext.preprocess_input(np.array([0.0, 255.0]))
        array([  0., 255.])
    """
    return x


def decode_predictions(preds, top=5):
    """Names the top ImageNet classes of each prediction (see `mk.applications.imagenet_utils`).

    Args:
        preds: an array of shape `(samples, 1000)`.
        top: int, how many classes per sample.

    Returns:
        A list of lists of `(class_name, class_description, score)`.

    Raises:
        ValueError: if `preds` is not of shape `(samples, 1000)`.
        FileNotFoundError: if ImageNet's class index is not in Keras's cache.

    Example:
        >>> mk.applications.convnext.decode_predictions(np.zeros((1, 9)))
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)

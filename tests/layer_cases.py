"""One example call for every exported layer: how to make it and what to call it on.

Shared by the tests that must cover every layer (`test_empty_batches.py`);
not collected by pytest. A new layer gets a line here, or the coverage test
fails and names it.
"""

import numpy as np

import minikeras as mk
from minikeras import layers


class _Doubled(layers.Wrapper):
    """The smallest wrapper: its layer's outputs, doubled (the case of the `Wrapper` base)."""

    def call(self, inputs):
        return 2.0 * self.layer(inputs)

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)


# name -> (factory, sample shapes without the batch axis, dtype, call style)
# call style: "single" (layer(x)), "list" (layer([a, b])) or "args" (layer(a, b)).
CASES = {
    "Activation": (lambda: layers.Activation("relu"), [(4,)], "float32", "single"),
    "Add": (layers.Add, [(4,), (4,)], "float32", "list"),
    "AdaptiveAveragePooling1D": (
        lambda: layers.AdaptiveAveragePooling1D(2),
        [(5, 2)],
        "float32",
        "single",
    ),
    "AdaptiveAveragePooling2D": (
        lambda: layers.AdaptiveAveragePooling2D(2),
        [(5, 4, 2)],
        "float32",
        "single",
    ),
    "AdaptiveAveragePooling3D": (
        lambda: layers.AdaptiveAveragePooling3D(2),
        [(3, 5, 4, 2)],
        "float32",
        "single",
    ),
    "AdaptiveMaxPooling1D": (lambda: layers.AdaptiveMaxPooling1D(2), [(5, 2)], "float32", "single"),
    "AdaptiveMaxPooling2D": (
        lambda: layers.AdaptiveMaxPooling2D(2),
        [(5, 4, 2)],
        "float32",
        "single",
    ),
    "AdaptiveMaxPooling3D": (
        lambda: layers.AdaptiveMaxPooling3D(2),
        [(3, 5, 4, 2)],
        "float32",
        "single",
    ),
    "Average": (layers.Average, [(4,), (4,)], "float32", "list"),
    "AveragePooling1D": (layers.AveragePooling1D, [(6, 2)], "float32", "single"),
    "AveragePooling2D": (layers.AveragePooling2D, [(6, 6, 2)], "float32", "single"),
    "BatchNormalization": (layers.BatchNormalization, [(4,)], "float32", "single"),
    "Bidirectional": (lambda: layers.Bidirectional(layers.LSTM(3)), [(5, 4)], "float32", "single"),
    "Concatenate": (layers.Concatenate, [(4,), (3,)], "float32", "list"),
    "Conv1D": (lambda: layers.Conv1D(2, 3), [(6, 3)], "float32", "single"),
    "Conv1DTranspose": (lambda: layers.Conv1DTranspose(2, 3), [(6, 3)], "float32", "single"),
    "Conv2D": (lambda: layers.Conv2D(2, 3), [(6, 6, 2)], "float32", "single"),
    "ConvLSTM1D": (lambda: layers.ConvLSTM1D(2, 2), [(3, 5, 2)], "float32", "single"),
    "ConvLSTM2D": (lambda: layers.ConvLSTM2D(2, 2), [(3, 4, 4, 2)], "float32", "single"),
    "ConvLSTM3D": (lambda: layers.ConvLSTM3D(2, 2), [(2, 3, 3, 3, 1)], "float32", "single"),
    "Conv2DTranspose": (lambda: layers.Conv2DTranspose(2, 3), [(6, 6, 2)], "float32", "single"),
    "Cropping2D": (lambda: layers.Cropping2D(1), [(5, 5, 2)], "float32", "single"),
    "Dense": (lambda: layers.Dense(3), [(4,)], "float32", "single"),
    "DepthwiseConv1D": (lambda: layers.DepthwiseConv1D(3), [(6, 2)], "float32", "single"),
    "DepthwiseConv2D": (lambda: layers.DepthwiseConv2D(3), [(6, 6, 2)], "float32", "single"),
    "Dot": (lambda: layers.Dot(axes=1), [(4,), (4,)], "float32", "list"),
    "Dropout": (lambda: layers.Dropout(0.5), [(4,)], "float32", "single"),
    "Embedding": (lambda: layers.Embedding(10, 3), [(5,)], "int64", "single"),
    "ReversibleEmbedding": (
        lambda: layers.ReversibleEmbedding(10, 3, tie_weights=False),
        [(5,)],
        "int64",
        "single",
    ),
    "Flatten": (layers.Flatten, [(2, 3)], "float32", "single"),
    "GaussianNoise": (lambda: layers.GaussianNoise(0.1), [(4,)], "float32", "single"),
    "GlobalAveragePooling1D": (layers.GlobalAveragePooling1D, [(6, 2)], "float32", "single"),
    "GlobalAveragePooling2D": (layers.GlobalAveragePooling2D, [(6, 6, 2)], "float32", "single"),
    "GlobalMaxPooling1D": (layers.GlobalMaxPooling1D, [(6, 2)], "float32", "single"),
    "GlobalMaxPooling2D": (layers.GlobalMaxPooling2D, [(6, 6, 2)], "float32", "single"),
    "GRU": (lambda: layers.GRU(3), [(5, 4)], "float32", "single"),
    "Lambda": (lambda: layers.Lambda(mk.ops.negative), [(4,)], "float32", "single"),
    "Layer": (layers.Layer, [(4,)], "float32", "single"),
    "LayerNormalization": (layers.LayerNormalization, [(4,)], "float32", "single"),
    "LSTM": (lambda: layers.LSTM(3), [(5, 4)], "float32", "single"),
    "Masking": (layers.Masking, [(5, 4)], "float32", "single"),
    "MaxPooling1D": (layers.MaxPooling1D, [(6, 2)], "float32", "single"),
    "MaxPooling2D": (layers.MaxPooling2D, [(6, 6, 2)], "float32", "single"),
    "Maximum": (layers.Maximum, [(4,), (4,)], "float32", "list"),
    "Minimum": (layers.Minimum, [(4,), (4,)], "float32", "list"),
    "MultiHeadAttention": (
        lambda: layers.MultiHeadAttention(num_heads=2, key_dim=3),
        [(4, 6), (5, 6)],
        "float32",
        "args",
    ),
    "Multiply": (layers.Multiply, [(4,), (4,)], "float32", "list"),
    "Permute": (lambda: layers.Permute((2, 1)), [(3, 4)], "float32", "single"),
    "RepeatVector": (lambda: layers.RepeatVector(2), [(4,)], "float32", "single"),
    "Reshape": (lambda: layers.Reshape((2, 2)), [(4,)], "float32", "single"),
    "SeparableConv1D": (lambda: layers.SeparableConv1D(2, 3), [(6, 2)], "float32", "single"),
    "SeparableConv2D": (lambda: layers.SeparableConv2D(2, 3), [(6, 6, 2)], "float32", "single"),
    "SimpleRNN": (lambda: layers.SimpleRNN(3), [(5, 4)], "float32", "single"),
    "SpatialDropout2D": (lambda: layers.SpatialDropout2D(0.5), [(4, 4, 2)], "float32", "single"),
    "Subtract": (layers.Subtract, [(4,), (4,)], "float32", "list"),
    "UpSampling2D": (layers.UpSampling2D, [(3, 3, 2)], "float32", "single"),
    "ZeroPadding2D": (lambda: layers.ZeroPadding2D(1), [(3, 3, 2)], "float32", "single"),
    "Conv3D": (lambda: layers.Conv3D(2, 2), [(4, 4, 4, 2)], "float32", "single"),
    "Conv3DTranspose": (lambda: layers.Conv3DTranspose(2, 2), [(3, 3, 3, 2)], "float32", "single"),
    "MaxPooling3D": (layers.MaxPooling3D, [(4, 4, 4, 2)], "float32", "single"),
    "AveragePooling3D": (layers.AveragePooling3D, [(4, 4, 4, 2)], "float32", "single"),
    "GlobalMaxPooling3D": (layers.GlobalMaxPooling3D, [(3, 3, 3, 2)], "float32", "single"),
    "GlobalAveragePooling3D": (layers.GlobalAveragePooling3D, [(3, 3, 3, 2)], "float32", "single"),
    "Cropping1D": (layers.Cropping1D, [(5, 2)], "float32", "single"),
    "Cropping3D": (layers.Cropping3D, [(4, 4, 4, 2)], "float32", "single"),
    "ZeroPadding1D": (layers.ZeroPadding1D, [(3, 2)], "float32", "single"),
    "ZeroPadding3D": (layers.ZeroPadding3D, [(2, 2, 2, 1)], "float32", "single"),
    "UpSampling1D": (layers.UpSampling1D, [(3, 2)], "float32", "single"),
    "UpSampling3D": (layers.UpSampling3D, [(2, 2, 2, 1)], "float32", "single"),
    "ReLU": (lambda: layers.ReLU(max_value=6.0), [(4,)], "float32", "single"),
    "LeakyReLU": (layers.LeakyReLU, [(4,)], "float32", "single"),
    "PReLU": (lambda: layers.PReLU(shared_axes=[1]), [(3, 4)], "float32", "single"),
    "ELU": (layers.ELU, [(4,)], "float32", "single"),
    "Softmax": (layers.Softmax, [(4,)], "float32", "single"),
    "AlphaDropout": (lambda: layers.AlphaDropout(0.2), [(4,)], "float32", "single"),
    "GaussianDropout": (lambda: layers.GaussianDropout(0.2), [(4,)], "float32", "single"),
    "SpatialDropout1D": (lambda: layers.SpatialDropout1D(0.5), [(4, 2)], "float32", "single"),
    "SpatialDropout3D": (lambda: layers.SpatialDropout3D(0.5), [(2, 2, 2, 2)], "float32", "single"),
    "Identity": (layers.Identity, [(4,)], "float32", "single"),
    "ActivityRegularization": (
        lambda: layers.ActivityRegularization(l1=0.01),
        [(4,)],
        "float32",
        "single",
    ),
    "EinsumDense": (
        lambda: layers.EinsumDense("abc,cd->abd", (None, 3), bias_axes="d"),
        [(5, 4)],
        "float32",
        "single",
    ),
    "GroupNormalization": (lambda: layers.GroupNormalization(2), [(3, 4)], "float32", "single"),
    "UnitNormalization": (layers.UnitNormalization, [(4,)], "float32", "single"),
    "Wrapper": (lambda: _Doubled(layers.Dense(3)), [(4,)], "float32", "single"),
    "SpectralNormalization": (
        lambda: layers.SpectralNormalization(layers.Dense(3)),
        [(4,)],
        "float32",
        "single",
    ),
    "RMSNormalization": (layers.RMSNormalization, [(3, 4)], "float32", "single"),
    "TimeDistributed": (
        lambda: layers.TimeDistributed(layers.Dense(3)),
        [(5, 4)],
        "float32",
        "single",
    ),
    "Attention": (layers.Attention, [(3, 4), (5, 2), (5, 4)], "float32", "list"),
    "AdditiveAttention": (layers.AdditiveAttention, [(3, 4), (5, 4)], "float32", "list"),
    "GroupQueryAttention": (
        lambda: layers.GroupQueryAttention(2, 4, 2),
        [(4, 6), (5, 6)],
        "float32",
        "args",
    ),
    "GroupedQueryAttention": (
        lambda: layers.GroupedQueryAttention(2, 2, 1, use_gate=True),
        [(4, 6), (5, 6)],
        "float32",
        "args",
    ),
    # Preprocessing (minikeras.layers.preprocessing); "str" inputs are digit strings.
    "CategoryEncoding": (lambda: layers.CategoryEncoding(10), [(3,)], "int64", "single"),
    "CenterCrop": (lambda: layers.CenterCrop(2, 3), [(4, 5, 2)], "float32", "single"),
    "Discretization": (
        lambda: layers.Discretization(bin_boundaries=[-1.0, 0.0, 1.0]),
        [(4,)],
        "float32",
        "single",
    ),
    "Hashing": (lambda: layers.Hashing(5), [(3,)], "int64", "single"),
    "HashedCrossing": (lambda: layers.HashedCrossing(5), [(1,), (1,)], "str", "list"),
    "IntegerLookup": (
        lambda: layers.IntegerLookup(vocabulary=[1, 2, 3]),
        [(4,)],
        "int64",
        "single",
    ),
    "StringLookup": (
        lambda: layers.StringLookup(vocabulary=["1", "2"], output_mode="multi_hot"),
        [(4,)],
        "str",
        "single",
    ),
    "TextVectorization": (
        lambda: layers.TextVectorization(vocabulary=["1", "2"], output_sequence_length=3),
        [()],
        "str",
        "single",
    ),
    "Normalization": (
        lambda: layers.Normalization(mean=1.0, variance=4.0),
        [(4,)],
        "float32",
        "single",
    ),
    "RandomBrightness": (
        lambda: layers.RandomBrightness(0.2, seed=1),
        [(4, 4, 2)],
        "float32",
        "single",
    ),
    "RandomContrast": (
        lambda: layers.RandomContrast(0.2, seed=1),
        [(4, 4, 2)],
        "float32",
        "single",
    ),
    "RandomCrop": (lambda: layers.RandomCrop(2, 3, seed=1), [(4, 5, 2)], "float32", "single"),
    "RandomFlip": (lambda: layers.RandomFlip(seed=1), [(4, 4, 2)], "float32", "single"),
    "RandomRotation": (
        lambda: layers.RandomRotation(0.2, seed=1),
        [(4, 4, 2)],
        "float32",
        "single",
    ),
    "RandomTranslation": (
        lambda: layers.RandomTranslation(0.2, 0.2, seed=1),
        [(4, 4, 2)],
        "float32",
        "single",
    ),
    "RandomZoom": (lambda: layers.RandomZoom(0.2, seed=1), [(4, 4, 2)], "float32", "single"),
    "RandomGrayscale": (lambda: layers.RandomGrayscale(seed=1), [(4, 4, 3)], "float32", "single"),
    "RandomInvert": (lambda: layers.RandomInvert(seed=1), [(4, 4, 2)], "float32", "single"),
    "Solarization": (lambda: layers.Solarization(0.2, 0.5), [(4, 4, 2)], "float32", "single"),
    "RandomPosterization": (
        lambda: layers.RandomPosterization(4, value_range=(-3, 3)),
        [(4, 4, 2)],
        "float32",
        "single",
    ),
    "AutoContrast": (layers.AutoContrast, [(4, 4, 2)], "float32", "single"),
    "RandomErasing": (lambda: layers.RandomErasing(seed=1), [(4, 4, 2)], "float32", "single"),
    "MixUp": (lambda: layers.MixUp(seed=1), [(4, 4, 2)], "float32", "single"),
    "CutMix": (lambda: layers.CutMix(seed=1), [(4, 4, 2)], "float32", "single"),
    "Equalization": (layers.Equalization, [(4, 4, 2)], "float32", "single"),
    "RandomHue": (lambda: layers.RandomHue(0.5, seed=1), [(4, 4, 3)], "float32", "single"),
    "RandomSaturation": (
        lambda: layers.RandomSaturation(0.5, seed=1),
        [(4, 4, 3)],
        "float32",
        "single",
    ),
    "RandomColorJitter": (
        lambda: layers.RandomColorJitter((0, 1), 0.2, 0.2, 0.5, 0.2, seed=1),
        [(4, 4, 3)],
        "float32",
        "single",
    ),
    "RandomColorDegeneration": (
        lambda: layers.RandomColorDegeneration(0.5, seed=1),
        [(4, 4, 3)],
        "float32",
        "single",
    ),
    "RandomSharpness": (
        lambda: layers.RandomSharpness(0.5, seed=1),
        [(4, 4, 2)],
        "float32",
        "single",
    ),
    "RandomGaussianBlur": (
        lambda: layers.RandomGaussianBlur(seed=1),
        [(4, 4, 2)],
        "float32",
        "single",
    ),
    "RandomShear": (lambda: layers.RandomShear(0.3, 0.3, seed=1), [(4, 4, 2)], "float32", "single"),
    "RandomPerspective": (
        lambda: layers.RandomPerspective(seed=1),
        [(4, 4, 2)],
        "float32",
        "single",
    ),
    "RandomElasticTransform": (
        lambda: layers.RandomElasticTransform(seed=1),
        [(6, 6, 2)],
        "float32",
        "single",
    ),
    "RandAugment": (lambda: layers.RandAugment(seed=1), [(4, 4, 3)], "float32", "single"),
    "AugMix": (lambda: layers.AugMix(seed=1), [(4, 4, 3)], "float32", "single"),
    "ContrastLimitedAdaptiveHistogramEqualization": (
        lambda: layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(2, 2)),
        [(4, 4, 2)],
        "float32",
        "single",
    ),
    "Pipeline": (
        lambda: layers.Pipeline([layers.RandomInvert(seed=1), layers.Flatten(), layers.Dense(2)]),
        [(4, 4, 2)],
        "float32",
        "single",
    ),
    "Rescaling": (lambda: layers.Rescaling(0.5, offset=1.0), [(4,)], "float32", "single"),
    "STFTSpectrogram": (
        lambda: layers.STFTSpectrogram(frame_length=4),
        [(16, 1)],
        "float32",
        "single",
    ),
    "MelSpectrogram": (
        lambda: layers.MelSpectrogram(fft_length=16, sequence_stride=4, num_mel_bins=4),
        [(32,)],
        "float32",
        "single",
    ),
    "Resizing": (lambda: layers.Resizing(3, 2), [(4, 5, 2)], "float32", "single"),
    "RNN": (lambda: layers.RNN(layers.LSTMCell(3)), [(5, 4)], "float32", "single"),
    "SimpleRNNCell": (lambda: layers.RNN(layers.SimpleRNNCell(3)), [(5, 4)], "float32", "single"),
    "LSTMCell": (
        lambda: layers.RNN(layers.LSTMCell(3), return_state=True),
        [(5, 4)],
        "float32",
        "single",
    ),
    "GRUCell": (lambda: layers.RNN(layers.GRUCell(3, dropout=0.5)), [(5, 4)], "float32", "single"),
    "StackedRNNCells": (
        lambda: layers.RNN(layers.StackedRNNCells([layers.LSTMCell(3), layers.GRUCell(2)])),
        [(5, 4)],
        "float32",
        "single",
    ),
}
# Keras's second names (MaxPool2D is MaxPooling2D): the same class, the same case.
for _alias in layers.aliases.__all__:
    CASES[_alias] = CASES[getattr(layers, _alias).__name__]


def exported_layers():
    """The names of every Layer class `minikeras.layers` exports.

    Not `InputLayer`: it stands for a model's Input and computes nothing
    (tests/test_input_layer.py).
    """
    import inspect

    return sorted(
        name
        for name in layers.__all__
        if inspect.isclass(getattr(layers, name))
        and issubclass(getattr(layers, name), layers.Layer)
        and name != "InputLayer"
    )


def sample(name, batch, rng):
    """A layer of `name` and inputs of `batch` samples for it (ints for ids, floats else)."""
    factory, shapes, dtype, style = CASES[name]
    if dtype == "str":
        data = [rng.integers(0, 10, (batch, *shape)).astype(str) for shape in shapes]
    elif dtype.startswith("int"):
        data = [rng.integers(0, 10, (batch, *shape)).astype(dtype) for shape in shapes]
    else:
        data = [rng.standard_normal((batch, *shape)).astype(dtype) for shape in shapes]
    return factory(), data, style


def call(layer, data, style, **kwargs):
    """Calls the layer on `data` in its call style."""
    if style == "single":
        return layer(data[0], **kwargs)
    if style == "list":
        return layer(data, **kwargs)
    return layer(*data, **kwargs)


__all__ = ["CASES", "call", "exported_layers", "sample"]
_ = np

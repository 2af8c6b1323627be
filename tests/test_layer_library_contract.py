"""The contract of the activation, noise, normalization, EinsumDense, TimeDistributed,
attention, wrapper, embedding and newer preprocessing layers, each through the case
`layer_cases.py` gives it: the symbolic shape equals the computed one (unknown batch),
`layers.serialize`/`deserialize` round trips, and a model saved and loaded predicts the
same."""

import numpy as np
import pytest
from layer_cases import CASES, call, sample

import minikeras as mk
from minikeras import layers

NAMES = [
    "ReLU", "LeakyReLU", "PReLU", "ELU", "Softmax", "Identity", "ActivityRegularization",
    "AlphaDropout", "GaussianDropout", "SpatialDropout1D", "SpatialDropout3D", "EinsumDense",
    "GroupNormalization", "UnitNormalization", "TimeDistributed", "Attention",
    "AdditiveAttention", "GroupQueryAttention", "GroupedQueryAttention", "RMSNormalization",
    "SpectralNormalization", "ReversibleEmbedding", "RandomGrayscale", "RandomInvert",
    "Solarization", "RandomPosterization", "AutoContrast", "RandomErasing", "MixUp", "CutMix",
    "Pipeline",
]  # fmt: skip


def symbolic_inputs(name):
    _, shapes, dtype, _ = CASES[name]
    return [mk.Input(shape, dtype=dtype) for shape in shapes]


@pytest.mark.parametrize("name", NAMES)
def test_symbolic_shape_equals_the_computed_one(name):
    rng = np.random.default_rng(0)
    layer, data, style = sample(name, 3, rng)
    inputs = symbolic_inputs(name)
    symbolic = call(layer, inputs, style)
    eager = call(layer, data, style)
    assert symbolic.shape == (None, *eager.shape[1:])


@pytest.mark.parametrize("name", NAMES)
def test_serialize_round_trip_and_saved_model_predicts_the_same(name, tmp_path):
    rng = np.random.default_rng(1)
    layer, data, style = sample(name, 3, rng)
    inputs = symbolic_inputs(name)
    model = mk.Model(inputs, call(layer, inputs, style))
    clone = layers.deserialize(layers.serialize(layer))
    assert type(clone) is type(layer)
    assert clone.get_config() == layer.get_config()
    path = tmp_path / f"{name}.keras"
    model.save(path)
    loaded = mk.saving.load_model(path)
    np.testing.assert_allclose(
        loaded.predict(data, verbose=0), model.predict(data, verbose=0), rtol=1e-6
    )

"""Options Keras 3.15 writes or takes that minikeras lacks: inert values load, set ones are
refused by name; unknown keyword arguments are Keras's ValueError. Configs made by Keras
itself when it is importable (skipped otherwise), hand-written ones everywhere."""

import numpy as np
import pytest

from minikeras import layers

# The configs Keras 3.15.1 writes for these layers (besides name, trainable, dtype).
HAND_WRITTEN = {
    "Dense": {"units": 3, "activation": "linear", "use_bias": True, "quantization_config": None},
    "EinsumDense": {
        "equation": "ab,bc->ac",
        "output_shape": [3],
        "activation": "linear",
        "bias_axes": None,
        "activity_regularizer": None,
        "quantization_config": None,
    },  # fmt: skip
    "Embedding": {
        "input_dim": 5,
        "output_dim": 3,
        "activity_regularizer": None,
        "mask_zero": False,
        "quantization_config": None,
    },  # fmt: skip
}


@pytest.mark.parametrize("class_name", sorted(HAND_WRITTEN))
def test_quantization_config_none_loads_and_a_set_one_is_refused_by_name(class_name):
    cls = getattr(layers, class_name)
    config = {**HAND_WRITTEN[class_name], "name": "mine"}
    layer = cls.from_config(config)
    assert layer.get_config()["quantization_config"] is None
    assert cls.from_config(layer.get_config()).get_config() == layer.get_config()
    for argument, value in [("quantization_config", {"mode": "int8"}), ("lora_rank", 4)]:
        with pytest.raises(ValueError, match=rf"{class_name} 'mine': {argument}=.* not supported"):
            cls.from_config({**config, argument: value})
    # Keras ignores lora_alpha without lora_rank; so does minikeras.
    assert cls.from_config({**config, "lora_rank": None, "lora_alpha": 8.0}).name == "mine"


def test_einsum_dense_refuses_a_gptq_column_size():
    with pytest.raises(ValueError, match="EinsumDense 'e': gptq_unpacked_column_size=8"):
        layers.EinsumDense("ab,bc->ac", 3, gptq_unpacked_column_size=8, name="e")


def test_raw_keras_configs_of_dense_einsum_dense_and_embedding_load():
    keras = pytest.importorskip("keras")
    x = np.arange(8, dtype="float32").reshape(2, 4) / 8
    ids = np.array([[1, 0, 4]])
    pairs = [
        (keras.layers.Dense(3, activation="relu", name="d"), layers.Dense, x),
        (keras.layers.EinsumDense("ab,bc->ac", 3, bias_axes="c", name="e"), layers.EinsumDense, x),
        (keras.layers.Embedding(5, 3, mask_zero=True, name="m"), layers.Embedding, ids),
    ]
    for theirs, cls, inputs in pairs:
        expected = keras.ops.convert_to_numpy(theirs(inputs))
        config = theirs.get_config()  # dtype policy and quantization_config included
        assert config["quantization_config"] is None
        ours = cls.from_config(config)
        ours(inputs)
        ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
        np.testing.assert_allclose(ours(inputs).numpy(), expected, rtol=1e-5, atol=1e-6)
        assert set(config) <= set(ours.get_config()) | {"activity_regularizer"}
        quantized = {**config, "quantization_config": {"class_name": "Int8QuantizationConfig"}}
        with pytest.raises(ValueError, match=f"'{config['name']}': quantization_config="):
            cls.from_config(quantized)


def test_unknown_keyword_arguments_are_keras_value_errors():
    with pytest.raises(
        ValueError, match=r"Unrecognized keyword arguments passed to Dense: \{'unit"
    ):
        layers.Dense(3, unit=4)
    with pytest.raises(ValueError, match="passed to LSTMCell: {'foo': 2}"):
        layers.LSTMCell(3, foo=2)


def test_unknown_keyword_arguments_match_keras():
    keras = pytest.importorskip("keras")
    for make in (
        lambda lib: lib.layers.Cropping1D(data_format="channels_last"),
        lambda lib: lib.layers.UpSampling1D(data_format=None),
        lambda lib: lib.layers.Dense(2, kernel=1),
    ):
        with pytest.raises(ValueError) as theirs:
            make(keras)
        with pytest.raises(ValueError) as ours:
            make(__import__("minikeras"))
        assert str(ours.value) == str(theirs.value)

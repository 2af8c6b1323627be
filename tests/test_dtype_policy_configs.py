"""A Keras 3 `DTypePolicy` config as a layer's dtype, so raw Keras configs load.

Keras writes a layer's dtype as `{"module": "keras", "class_name":
"DTypePolicy", "config": {"name": "float32"}}`, read here as that policy
(`"mixed_float16"` too); bfloat16 and quantized policies are refused by name.
Then real `get_config()` dicts of Keras 3 layers, passed straight to
`from_config`, give layers that compute what Keras's do (skipped without
`keras`).
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers


def policy(name, class_name="DTypePolicy"):
    return {"module": "keras", "class_name": class_name, "config": {"name": name},
            "registered_name": None}  # fmt: skip


def test_a_policy_of_one_dtype_is_that_dtype():
    dense = layers.Dense.from_config({"units": 2, "dtype": policy("float32")})
    assert dense.dtype == "float32" and dense.get_config()["dtype"] == "float32"
    assert dense(np.ones((1, 3))).dtype == np.float32
    wide = layers.LayerNormalization(dtype=policy("float64"))
    assert wide(np.ones((1, 3))).dtype == np.float64 and wide.gamma.dtype == np.float64


def test_keras_float_dtype_policy_alias_is_that_dtype():
    # Keras 3 keeps FloatDTypePolicy as another name of DTypePolicy (older files hold it).
    dense = layers.Dense.from_config({"units": 2, "dtype": policy("float64", "FloatDTypePolicy")})
    assert dense.dtype == "float64" and dense(np.ones((1, 3))).dtype == np.float64


def test_mixed_float16_is_accepted_and_bfloat16_and_quantized_policies_are_refused():
    dense = layers.Dense.from_config({"units": 2, "dtype": policy("mixed_float16")})
    assert (dense.compute_dtype, dense.variable_dtype) == ("float16", "float32")
    with pytest.raises(ValueError, match="Dropout '.*': DTypePolicy 'mixed_bfloat16' .*bfloat16"):
        layers.Dropout(0.1, dtype="mixed_bfloat16")
    quantized = {"module": "keras", "class_name": "QuantizedDTypePolicy",
                 "config": {"mode": "int8", "source_name": "float32"}}  # fmt: skip
    with pytest.raises(
        ValueError, match="Dense '.*': .*QuantizedDTypePolicy.* is not a DTypePolicy"
    ):
        layers.Dense(2, dtype=quantized)


# ---------------------------------------------------------------- real Keras configs


def _keras_layers(keras):
    """Keras layers whose configs hold nothing but what minikeras's take (and the policy)."""
    return {
        "LayerNormalization": (keras.layers.LayerNormalization(axis=[1, 2]), (2, 3, 4)),
        "Conv1D": (
            keras.layers.Conv1D(3, 2, padding="same", kernel_initializer="random_normal"),
            (2, 5, 4),
        ),
        "MultiHeadAttention": (
            keras.layers.MultiHeadAttention(2, 3, kernel_initializer="random_normal"),
            (2, 5, 4),
        ),
        "ZeroPadding1D": (keras.layers.ZeroPadding1D(2), (2, 3, 4)),
        "UpSampling2D": (keras.layers.UpSampling2D(2, interpolation="bilinear"), (2, 3, 4, 2)),
        "Dropout": (keras.layers.Dropout(0.3), (2, 4)),
    }


@pytest.mark.parametrize(
    "name",
    ["LayerNormalization", "Conv1D", "MultiHeadAttention", "ZeroPadding1D", "UpSampling2D",
     "Dropout"],
)  # fmt: skip
def test_a_raw_keras_config_loads_and_computes_the_same(name):
    keras = pytest.importorskip("keras")
    theirs, shape = _keras_layers(keras)[name]
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    inputs = (x, x) if name == "MultiHeadAttention" else (x,)
    expected = keras.ops.convert_to_numpy(theirs(*inputs))
    config = theirs.get_config()
    assert config["dtype"]["class_name"] == "DTypePolicy"
    ours = getattr(layers, name).from_config(config)
    assert ours.dtype == "float32" and ours.name == theirs.name
    ours(*inputs)
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    np.testing.assert_allclose(ours(*inputs).numpy(), expected, rtol=1e-5, atol=1e-5)


def test_a_raw_keras_mixed_precision_config_loads_with_its_policy():
    keras = pytest.importorskip("keras")
    config = keras.layers.Dropout(0.1, dtype="mixed_float16").get_config()
    dropout = mk.layers.Dropout.from_config(config)
    assert dropout.dtype_policy == mk.DTypePolicy("mixed_float16")
    assert dropout(np.ones((2, 3))).dtype == np.float16


def test_a_saved_entry_with_the_float_dtype_policy_alias_is_cleaned_to_its_dtype():
    from minikeras.saving.keras_config import clean_entry

    entry = {"module": "keras.layers", "class_name": "Dense", "registered_name": None,
             "config": {"units": 2, "dtype": policy("float64", "FloatDTypePolicy")}}  # fmt: skip
    assert clean_entry(entry)["config"] == {"units": 2, "dtype": "float64"}

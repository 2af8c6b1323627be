"""Dtype policies: the objects, the global policy, and a layer's dtype attributes.

Values are checked by hand, and against Keras 3 where it is installed
(skipped otherwise). The root conftest restores the global policy after
each test.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import dtype_policies
from minikeras.dtype_policies import DTypePolicy, FloatDTypePolicy

POLICIES = {  # name: (compute dtype, variable dtype), by Keras 3's definition
    "float32": ("float32", "float32"),
    "float64": ("float64", "float64"),
    "float16": ("float16", "float16"),
    "mixed_float16": ("float16", "float32"),
    "int32": ("int32", "int32"),
}


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_a_policy_has_the_dtypes_of_its_name(name):
    policy = DTypePolicy(name)
    assert (policy.compute_dtype, policy.variable_dtype) == POLICIES[name]
    assert policy.name == name and policy.quantization_mode is None
    assert repr(policy) == f'<DTypePolicy "{name}">'
    assert policy.get_config() == {"name": name}
    assert DTypePolicy.from_config(policy.get_config()) == policy


def test_float_dtype_policy_is_another_name_of_the_same_policy():
    alias = FloatDTypePolicy("mixed_float16")
    assert alias == DTypePolicy("mixed_float16") and repr(alias) == '<DTypePolicy "mixed_float16">'
    assert DTypePolicy("float32") != DTypePolicy("float64")
    assert dtype_policies.serialize(alias)["class_name"] == "DTypePolicy"


def test_get_reads_names_configs_dtypes_policies_and_none():
    policy = DTypePolicy("float64")
    assert dtype_policies.get(policy) is policy
    assert dtype_policies.get("mixed_float16").compute_dtype == "float16"
    assert dtype_policies.get(np.float64) == policy
    assert dtype_policies.get(
        {"class_name": "FloatDTypePolicy", "config": {"name": "float16"}}
    ) == (DTypePolicy("float16"))
    assert dtype_policies.get(None) == DTypePolicy("float32")
    entry = dtype_policies.serialize(DTypePolicy("mixed_float16"))
    assert entry == {"module": "keras", "class_name": "DTypePolicy",
                     "config": {"name": "mixed_float16"}, "registered_name": None}  # fmt: skip
    assert dtype_policies.deserialize(entry) == DTypePolicy("mixed_float16")


def test_unknown_and_bfloat16_policies_are_refused_by_name():
    with pytest.raises(ValueError, match="Cannot convert 'float17' to a DTypePolicy"):
        DTypePolicy("float17")
    for name in ("mixed_bfloat16", "bfloat16"):
        with pytest.raises(ValueError, match=f"DTypePolicy '{name}' .* numpy has no bfloat16"):
            DTypePolicy(name)
    with pytest.raises(TypeError, match="'name' must be a string"):
        DTypePolicy(16)
    with pytest.raises(ValueError, match="expected the name of a policy .* got 3"):
        mk.config.set_dtype_policy(3)
    with pytest.raises(ValueError, match="not a DTypePolicy config"):
        dtype_policies.deserialize({"class_name": "QuantizedDTypePolicy", "config": {}})


def test_the_global_policy_is_floatx_until_set_and_names_agree():
    assert mk.config.dtype_policy() == DTypePolicy("float32")
    mk.config.set_floatx("float64")
    try:
        assert mk.mixed_precision.global_policy() == DTypePolicy("float64")
    finally:
        mk.config.set_floatx("float32")
    mk.mixed_precision.set_global_policy("mixed_float16")
    assert mk.config.dtype_policy() is mk.mixed_precision.dtype_policy()
    assert (
        mk.mixed_precision.Policy is DTypePolicy and mk.mixed_precision.DTypePolicy is DTypePolicy
    )
    assert DTypePolicy().name == "mixed_float16"  # (no name: the global one's)
    dense = mk.layers.Dense(2)
    assert (dense.compute_dtype, dense.variable_dtype, dense.dtype) == (
        "float16",
        "float32",
        "float32",
    )
    mk.mixed_precision.set_dtype_policy(DTypePolicy("float64"))
    assert mk.layers.Dense(2).dtype == "float64"
    assert dense.compute_dtype == "float16"  # (a layer keeps the policy it was made with)


# ------------------------------------------------------------------------ layers


def test_a_layer_takes_its_policy_from_its_dtype_argument():
    dense = mk.layers.Dense(2, dtype="mixed_float16")
    assert dense.dtype_policy == DTypePolicy("mixed_float16")
    assert (dense.compute_dtype, dense.input_dtype) == ("float16", "float16")
    assert (dense.variable_dtype, dense.dtype) == ("float32", "float32")
    assert mk.layers.Dense(2, dtype=DTypePolicy("float64")).dtype == "float64"
    assert mk.layers.Dense(2).dtype_policy == DTypePolicy("float32")


def test_add_weight_makes_weights_in_the_variable_dtype_unless_told():
    layer = mk.layers.Layer(dtype="mixed_float16")
    assert layer.add_weight(shape=(2,)).dtype == np.float32
    assert layer.add_weight(shape=(2,), dtype="float16").dtype == np.float16


def test_setting_dtype_policy_changes_later_calls_not_existing_weights():
    dense = mk.layers.Dense(2)
    dense(np.ones((1, 3)))
    dense.dtype_policy = "mixed_float16"
    assert dense.kernel.dtype == np.float32 and dense(np.ones((1, 3))).dtype == np.float16
    dense.dtype_policy = None  # the global one
    assert dense.dtype_policy == DTypePolicy("float32")


def test_an_unknown_policy_is_refused_naming_the_layer_and_the_policy():
    with pytest.raises(ValueError, match="Dense 'head': Cannot convert 'mixed_float8'"):
        mk.layers.Dense(2, name="head", dtype="mixed_float8")
    dense = mk.layers.Dense(2, name="body")
    with pytest.raises(ValueError, match="Dense 'body': DTypePolicy 'mixed_bfloat16'"):
        dense.dtype_policy = "mixed_bfloat16"
    assert dense.dtype_policy == DTypePolicy("float32")  # (unchanged)


def test_get_config_writes_the_policy_name_and_from_config_reads_it_back():
    dense = mk.layers.Dense(2, dtype="mixed_float16")
    assert dense.get_config()["dtype"] == "mixed_float16"
    again = mk.layers.Dense.from_config(dense.get_config())
    assert again.dtype_policy == dense.dtype_policy
    assert mk.layers.Dense(2).get_config()["dtype"] == "float32"


def test_a_mixed_model_round_trips_through_a_keras_file(tmp_path):
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2, dtype="mixed_float16")])
    x = np.random.default_rng(0).standard_normal((4, 3)).astype("float32")
    path = str(tmp_path / "mixed.keras")
    model.save(path)
    loaded = mk.saving.load_model(path)
    assert loaded.layers[0].dtype_policy == DTypePolicy("mixed_float16")
    assert loaded.layers[0].kernel.dtype == np.float32
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


# ------------------------------------------------------------------------ Keras


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "mixed_float16"])
def test_policies_match_keras(name):
    keras = pytest.importorskip("keras")
    theirs, ours = keras.DTypePolicy(name), DTypePolicy(name)
    assert (ours.compute_dtype, ours.variable_dtype) == (
        theirs.compute_dtype,
        theirs.variable_dtype,
    )
    assert repr(ours) == repr(theirs) and ours.get_config() == theirs.get_config()
    assert dtype_policies.serialize(ours) == keras.dtype_policies.serialize(theirs)
    their_layer, our_layer = keras.layers.Dense(2, dtype=name), mk.layers.Dense(2, dtype=name)
    for attribute in ("dtype", "compute_dtype", "variable_dtype", "input_dtype"):
        assert getattr(our_layer, attribute) == getattr(their_layer, attribute), attribute


def test_keras_reads_our_layer_config_and_we_read_theirs():
    keras = pytest.importorskip("keras")
    ours = mk.layers.Dense(2, dtype="mixed_float16").get_config()
    assert keras.layers.Dense.from_config(ours).dtype_policy.name == "mixed_float16"
    theirs = keras.layers.Dense(2, dtype="mixed_float16").get_config()
    assert mk.layers.Dense.from_config(theirs).dtype_policy.name == "mixed_float16"


def test_a_mixed_keras_file_loads_with_its_policy(tmp_path):
    keras = pytest.importorskip("keras")
    theirs = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, dtype="mixed_float16")])
    path = str(tmp_path / "theirs.keras")
    theirs.save(path)
    ours = mk.saving.load_model(path)
    assert ours.layers[0].dtype_policy == DTypePolicy("mixed_float16")
    x = np.random.default_rng(1).standard_normal((4, 3)).astype("float32")
    expected = keras.ops.convert_to_numpy(theirs(x))
    assert ours(x).dtype == expected.dtype == np.float16
    np.testing.assert_allclose(ours(x).numpy(), expected, rtol=2e-3, atol=2e-3)

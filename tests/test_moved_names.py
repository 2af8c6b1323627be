"""A name that moved to another module when a module was split is still found where it was.

Code imports from the old module paths, and saved files name classes and
functions by the module that defined them when the file was written, so a
split must keep both working: the old path re-exports the name, and loading
finds a built-in by its public name whatever module the file gives.
"""

import importlib
import inspect

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers, ops
from minikeras.saving import deserialize_layer, serialize_layer

# The module each name was first written in -> the names that moved out of it.
MOVED_FROM = {
    "minikeras.ops.math": ("abs", "exp", "log", "log1p", "sign", "sqrt", "tanh"),
    "minikeras.layers.pooling": (
        "GlobalAveragePooling1D",
        "GlobalAveragePooling2D",
        "GlobalMaxPooling1D",
        "GlobalMaxPooling2D",
    ),
    "minikeras.layers.reshaping": ("Cropping2D", "UpSampling2D", "ZeroPadding2D"),
    "minikeras.layers.normalization": ("ScaleAndCenter",),
    "minikeras.initializers.random_initializers": (
        "GlorotNormal",
        "GlorotUniform",
        "HeNormal",
        "HeUniform",
        "LecunNormal",
        "LecunUniform",
        "VarianceScaling",
    ),
    "minikeras.saving.keras_layout": ("optimizer_variables",),
    "minikeras.saving.keras_file": ("load_keras_weights",),
    "minikeras.models.replayed_call": (
        "REPLAYABLE_LAYERS",
        "defined_in",
        "not_replayable",
        "overridden_method",
    ),
    "minikeras.engine.tensor": (
        "add_read_observer",
        "note_effect",
        "read_variable",
        "remove_read_observer",
    ),
    "minikeras.engine.replay": ("Recorder",),
    "minikeras.layers.rnn": ("first_mask", "split_initial_state", "with_initial_state"),
}
PACKAGES = {
    "minikeras.ops": ops,
    "minikeras.layers.normalization": importlib.import_module("minikeras.layers.scale_and_center"),
    "minikeras.initializers": mk.initializers,
    "minikeras.saving.keras_layout": importlib.import_module(
        "minikeras.saving.keras_optimizer_layout"
    ),
    "minikeras.saving.keras_file": importlib.import_module("minikeras.saving.keras_weights_reader"),
    "minikeras.models.replayed_call": importlib.import_module("minikeras.models.replayability"),
    "minikeras.engine.tensor": importlib.import_module("minikeras.engine.variable_reads"),
    "minikeras.engine.replay": importlib.import_module("minikeras.engine.replay_recorder"),
    "minikeras.layers.rnn": importlib.import_module("minikeras.layers.rnn_arguments"),
}
MOVED = [
    (module, name, next((p for prefix, p in PACKAGES.items() if module.startswith(prefix)), layers))
    for module, names in MOVED_FROM.items()
    for name in names
]


@pytest.mark.parametrize(("module", "name", "package"), MOVED)
def test_a_moved_name_is_importable_from_its_old_module(module, name, package):
    old = importlib.import_module(module)
    # (minikeras.ops wraps its functions to record graph nodes on symbolic tensors)
    assert getattr(old, name) is inspect.unwrap(getattr(package, name))
    assert name in old.__all__


@pytest.mark.parametrize(
    ("old_module", "function"),
    [("minikeras.ops.math", ops.tanh), ("minikeras.ops.math", ops.maximum)],
)
def test_a_lambda_naming_a_moved_op_by_its_old_module_loads(old_module, function):
    entry = serialize_layer(layers.Lambda(function, name="f"))
    assert entry["config"]["function"]["module"] != old_module  # it has moved
    entry["config"]["function"]["module"] = old_module
    layer = deserialize_layer(entry)
    assert layer.function is function


def test_a_lambda_of_tanh_saved_under_ops_math_computes_tanh(tmp_path):
    model = mk.Sequential([mk.Input((3,)), layers.Lambda(ops.tanh, name="t")])
    x = np.array([[-2.0, 0.0, 0.5]], dtype="float32")
    config = model.get_config()
    config["layers"][1]["config"]["function"]["module"] = "minikeras.ops.math"
    rebuilt = mk.Sequential.from_config(config)
    np.testing.assert_allclose(rebuilt.predict(x, verbose=0), np.tanh(x), rtol=1e-6)


def test_a_function_outside_the_package_is_not_found_by_its_name():
    entry = serialize_layer(layers.Lambda(ops.tanh, name="f"))
    entry["config"]["function"]["module"] = "numpy.linalg"
    with pytest.raises(ValueError, match="not registered"):
        deserialize_layer(entry)


def test_a_layer_saved_under_its_old_module_loads():
    entry = serialize_layer(layers.GlobalMaxPooling2D(keepdims=True, name="g"))
    entry["module"] = "minikeras.layers.pooling"
    layer = deserialize_layer(entry)
    assert type(layer) is layers.GlobalMaxPooling2D and layer.keepdims


@pytest.mark.parametrize("name", ["resize", "extract_patches", "pad_images", "crop_images"])
def test_a_lambda_of_an_ops_image_function_round_trips_and_saves(name, tmp_path):
    # ops.image's functions say they are minikeras.ops's, as every op: a config naming
    # them so finds them in ops.image (from_config failed, and .keras saving refused them).
    function = getattr(ops.image, name)
    arguments = {
        "resize": {"size": (4, 4)},
        "extract_patches": {"size": 2},
        "pad_images": {
            "top_padding": 1,
            "left_padding": 1,
            "target_height": 10,
            "target_width": 10,
        },
        "crop_images": {
            "top_cropping": 1,
            "left_cropping": 1,
            "target_height": 6,
            "target_width": 6,
        },
    }[name]
    x = mk.Input((8, 8, 3))
    model = mk.Model(x, layers.Lambda(function, arguments=arguments, name="f")(x))
    data = np.arange(192, dtype="float32").reshape(1, 8, 8, 3)
    expected = model.predict(data, verbose=0)
    rebuilt = mk.Model.from_config(model.get_config())
    np.testing.assert_array_equal(rebuilt.predict(data, verbose=0), expected)
    model.save(tmp_path / "image_lambda.keras")
    loaded = mk.saving.load_model(tmp_path / "image_lambda.keras")
    np.testing.assert_array_equal(loaded.predict(data, verbose=0), expected)


def test_squeeze_or_expand_to_same_rank_is_still_public_in_losses_functions():
    from minikeras.losses import functions

    assert "squeeze_or_expand_to_same_rank" in functions.__all__
    assert functions.squeeze_or_expand_to_same_rank is mk.losses.squeeze_or_expand_to_same_rank

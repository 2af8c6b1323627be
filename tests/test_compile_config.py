"""`Model.get_compile_config` / `compile_from_config`, the optimizer's `iterations` dtype and
the Python floats of `fit`'s History: by hand and against Keras 3 (configs crossing both ways)."""

import os
import warnings

import numpy as np
import pytest

import minikeras as mk

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 2)).astype("float32")
Y = (X[:, :1] > 0).astype("float32")


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def _model(api):
    return api.Sequential([api.Input((2,)), api.layers.Dense(1, activation="sigmoid")])


def _compiled(api):
    model = _model(api)
    model.compile(
        optimizer=api.optimizers.Adam(0.01),
        loss="binary_crossentropy",
        metrics=["accuracy", api.metrics.AUC(name="auc")],
        loss_weights=[2.0],
    )
    return model


def test_get_compile_config_keeps_what_compile_was_given():
    config = _compiled(mk).get_compile_config()
    assert config["optimizer"]["class_name"] == "Adam"
    assert config["optimizer"]["module"] == "keras.optimizers"
    assert config["optimizer"]["config"]["learning_rate"] == pytest.approx(0.01)
    assert config["loss"] == "binary_crossentropy" and config["loss_weights"] == [2.0]
    assert config["metrics"][0] == "accuracy"  # a name stays a name
    assert config["metrics"][1]["class_name"] == "AUC"
    assert config["metrics"][1]["config"]["name"] == "auc"
    assert config["weighted_metrics"] is None and config["steps_per_execution"] == 1
    assert config["run_eagerly"] is False
    model = _model(mk)
    assert model.get_compile_config() == {}
    model.compile("sgd", mk.losses.Huber(delta=2.0), run_eagerly=True, jit_compile=False)
    config = model.get_compile_config()
    assert config["loss"]["class_name"] == "Huber" and config["loss"]["config"]["delta"] == 2.0
    assert config["optimizer"]["class_name"] == "SGD" and config["metrics"] is None
    assert (config["run_eagerly"], config["jit_compile"]) == (True, False)


def test_compile_from_config_round_trips_and_trains_the_same():
    ours = _compiled(mk)
    config = ours.get_compile_config()
    again = _model(mk)
    again.set_weights(ours.get_weights())
    again.compile_from_config(config)
    assert again.compiled and again.optimizer is not ours.optimizer
    assert again.optimizer.built  # (the model is built: as Keras, its slots are made)
    assert again.get_compile_config() == config
    first = ours.fit(X, Y, epochs=2, batch_size=4, verbose=0, shuffle=False).history
    second = again.fit(X, Y, epochs=2, batch_size=4, verbose=0, shuffle=False).history
    assert first == second
    unbuilt = mk.Sequential([mk.layers.Dense(1)])
    unbuilt.compile_from_config({"optimizer": "adam", "loss": "mse"})
    assert unbuilt.compiled and not unbuilt.optimizer.built


def test_a_model_with_its_own_compile_is_not_compiled_from_config():
    class OwnCompile(mk.Sequential):
        def compile(self, **kwargs):
            super().compile(**kwargs)

    model = OwnCompile([mk.Input((2,)), mk.layers.Dense(1)])
    with pytest.warns(UserWarning, match="overrides compile"):
        model.compile_from_config({"optimizer": "adam", "loss": "mse"})
    assert not model.compiled


def test_bad_compile_configs_are_refused():
    model = _model(mk)
    with pytest.raises(ValueError, match="compile config dict"):
        model.compile_from_config(["adam", "mse"])
    with pytest.raises(ValueError, match="does not honour"):
        model.compile_from_config({"optimizer": "adam", "loss": "mse", "auto_scale_loss": 3})
    assert not model.compiled


def test_history_and_evaluate_hold_python_floats_and_iterations_are_int32():
    model = _compiled(mk)
    history = model.fit(X, Y, epochs=2, batch_size=4, verbose=0, validation_data=(X, Y))
    for values in history.history.values():
        assert all(type(value) is float for value in values)
    assert all(type(v) is float for v in model.evaluate(X, Y, verbose=0, return_dict=True).values())
    iterations = model.optimizer.iterations
    assert iterations.dtype == np.int32 and int(iterations.numpy()) == 4


def test_configs_cross_to_keras_and_back():
    keras = _keras()
    ours, theirs = _compiled(mk), _compiled(keras)
    mine, their_config = ours.get_compile_config(), theirs.get_compile_config()
    for key in ("loss", "loss_weights", "metrics", "weighted_metrics", "steps_per_execution"):
        assert mine[key] == their_config[key], key
    assert mine["optimizer"]["class_name"] == their_config["optimizer"]["class_name"]
    assert set(mine["optimizer"]["config"]) <= set(their_config["optimizer"]["config"])
    assert _model(mk).get_compile_config() == _model(keras).get_compile_config() == {}

    # Keras's config compiles a minikeras model, and ours a Keras model: same training.
    weights = ours.get_weights()
    from_theirs, from_ours = _model(mk), _model(keras)
    from_theirs.set_weights(weights)
    from_ours.set_weights(weights)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_theirs.compile_from_config(their_config)
        from_ours.compile_from_config(mine)
    assert type(from_ours.optimizer).__name__ == "Adam"
    assert float(from_ours.optimizer.learning_rate) == pytest.approx(0.01)
    mk_history = from_theirs.fit(X, Y, epochs=2, batch_size=4, verbose=0, shuffle=False).history
    keras_history = from_ours.fit(X, Y, epochs=2, batch_size=4, verbose=0, shuffle=False).history
    assert set(mk_history) == set(keras_history)
    for key in mk_history:
        np.testing.assert_allclose(mk_history[key], keras_history[key], rtol=1e-4, atol=1e-6)
        assert {type(v) for v in mk_history[key]} == {type(v) for v in keras_history[key]}


def test_iterations_dtype_is_keras_s():
    keras = _keras()
    for name in ("Adam", "SGD", "RMSprop"):
        theirs = getattr(keras.optimizers, name)().iterations.dtype
        assert str(getattr(mk.optimizers, name)().iterations.dtype) == theirs


@pytest.mark.parametrize("loss_weights", [[2.0], (2.0,), 2.0, {"out": 2.0}])
def test_one_output_s_loss_weight_scales_its_loss(loss_weights):
    # mse of outputs 2 against targets 0 is 4; the weight makes it 8 (a list of one
    # weight is that output's weight, as in Keras, not an array to multiply by).
    dense = mk.layers.Dense(1, kernel_initializer="ones", name="out")
    model = mk.Sequential([mk.Input((2,)), dense])
    model.compile("sgd", "mse", loss_weights=loss_weights)
    x, y = np.ones((4, 2), "float32"), np.zeros((4, 1), "float32")
    assert model.evaluate(x, y, verbose=0) == pytest.approx(8.0)
    assert model.fit(x, y, verbose=0).history["loss"] == [pytest.approx(8.0)]


def test_one_output_s_loss_weight_as_keras():
    keras = _keras()
    x, y = np.ones((4, 2), "float32"), np.zeros((4, 1), "float32")
    for loss_weights in ([2.0], 2.0):
        results = []
        for api in (mk, keras):
            model = api.Sequential(
                [api.Input((2,)), api.layers.Dense(1, kernel_initializer="ones")]
            )
            model.compile("sgd", "mse", loss_weights=loss_weights)
            results.append(model.evaluate(x, y, verbose=0))
        assert results[0] == pytest.approx(results[1], rel=1e-6)


@mk.saving.register_keras_serializable(package="cc_test")
def mean_gap(y_true, y_pred):
    return mk.ops.mean(y_true - y_pred, axis=-1)


def _function_compiled(api, metric):
    model = _model(api)
    model.compile(
        optimizer="sgd",
        loss=api.losses.mean_squared_error,
        metrics=[api.metrics.mean_absolute_error, metric],
    )
    return model


def _function_entry(name):
    return {
        "module": "builtins",
        "class_name": "function",
        "config": name,
        "registered_name": "function",
    }


def test_functions_are_written_as_keras_function_entries_and_read_back():
    model = _function_compiled(mk, mean_gap)
    config = model.get_compile_config()
    assert config["loss"] == _function_entry("mean_squared_error")
    assert config["metrics"] == [
        _function_entry("mean_absolute_error"),
        _function_entry("cc_test>mean_gap"),
    ]
    again = _model(mk)
    again.set_weights(model.get_weights())
    again.compile_from_config(config)
    assert again.get_compile_config() == config
    result = again.evaluate(X, Y, verbose=0, return_dict=True)
    predicted = again.predict(X, verbose=0)
    assert result["loss"] == pytest.approx(float(np.mean((Y - predicted) ** 2)), rel=1e-5)
    assert result["mean_gap"] == pytest.approx(float(np.mean(Y - predicted)), rel=1e-5, abs=1e-6)
    with pytest.raises(ValueError, match="unknown metric function 'nowhere>gap'"):
        _model(mk).compile_from_config({**config, "metrics": [_function_entry("nowhere>gap")]})


def test_function_entries_cross_to_keras_and_back(tmp_path):
    keras = _keras()

    def keras_mean_gap(y_true, y_pred):
        return keras.ops.mean(y_true - y_pred, axis=-1)

    keras_mean_gap.__name__ = "mean_gap"  # (Keras names the metric after the function)
    keras.saving.register_keras_serializable(package="cc_test")(keras_mean_gap)
    ours, theirs = _function_compiled(mk, mean_gap), _function_compiled(keras, keras_mean_gap)
    mine, their_config = ours.get_compile_config(), theirs.get_compile_config()
    for key in ("loss", "metrics", "weighted_metrics"):
        assert mine[key] == their_config[key], key
    from_theirs, from_ours = _model(mk), _model(keras)
    from_theirs.set_weights(ours.get_weights())
    from_ours.set_weights(ours.get_weights())
    from_theirs.compile_from_config(their_config)
    from_ours.compile_from_config(mine)
    mk_result = from_theirs.evaluate(X, Y, verbose=0, return_dict=True)
    keras_result = from_ours.evaluate(X, Y, verbose=0, return_dict=True)
    assert set(mk_result) == set(keras_result)
    for key in mk_result:
        assert mk_result[key] == pytest.approx(keras_result[key], rel=1e-5, abs=1e-6), key

    theirs.fit(X, Y, epochs=1, batch_size=4, verbose=0)
    theirs.save(tmp_path / "functions.keras")
    loaded = mk.saving.load_model(tmp_path / "functions.keras")
    assert loaded.get_compile_config()["loss"] == _function_entry("mean_squared_error")
    assert loaded.evaluate(X, Y, verbose=0) == pytest.approx(
        theirs.evaluate(X, Y, verbose=0), rel=1e-5
    )


def test_steps_per_execution_is_accepted_by_both_compile_paths():
    # (compile takes any value and runs one step per batch; a file's config is read alike)
    config = {"optimizer": "adam", "loss": "mse", "steps_per_execution": 4}
    arguments = mk.saving.keras_config.compile_arguments(config)
    assert arguments["optimizer"] == "adam" and arguments["loss"] == "mse"
    model = _model(mk)
    model.compile_from_config(config)
    assert model.steps_per_execution == 4
    assert model.get_compile_config()["steps_per_execution"] == 4


def test_a_keras_file_with_steps_per_execution_loads(tmp_path):
    keras = _keras()
    theirs = _model(keras)
    theirs.compile("adam", "mse", metrics=["mae"], steps_per_execution=4)
    theirs.fit(X, Y, epochs=1, batch_size=2, verbose=0)
    theirs.save(tmp_path / "steps.keras")
    loaded = mk.saving.load_model(tmp_path / "steps.keras")
    assert loaded.compiled and loaded.steps_per_execution == 4
    assert int(loaded.optimizer.iterations.numpy()) == int(theirs.optimizer.iterations.numpy())
    assert loaded.evaluate(X, Y, verbose=0) == pytest.approx(
        theirs.evaluate(X, Y, verbose=0), rel=1e-5
    )


@pytest.mark.parametrize("suffix", ["keras", "minikeras"])
def test_our_saved_files_keep_steps_per_execution(tmp_path, suffix):
    model = _model(mk)
    model.compile("adam", "mse", steps_per_execution=4)
    model.save(tmp_path / f"steps.{suffix}")
    loaded = mk.saving.load_model(tmp_path / f"steps.{suffix}")
    assert loaded.steps_per_execution == 4
    assert loaded.get_compile_config()["steps_per_execution"] == 4


def test_keras_reads_steps_per_execution_from_our_keras_file(tmp_path):
    keras = _keras()
    model = _model(mk)
    model.compile("adam", "mse", steps_per_execution=4)
    model.save(tmp_path / "steps.keras")
    assert keras.saving.load_model(tmp_path / "steps.keras").steps_per_execution == 4


def test_a_saved_file_names_function_losses_and_metrics_as_keras_reads_them(tmp_path):
    # The file's compile config holds Keras's function entries (bare names made Keras's
    # load_model fail: "Could not interpret loss identifier"); minikeras reads it back too.
    import json
    import zipfile

    model = _function_compiled(mk, mean_gap)
    model.fit(X, Y, epochs=1, batch_size=4, verbose=0)
    model.save(tmp_path / "functions.keras")
    with zipfile.ZipFile(tmp_path / "functions.keras") as archive:
        written = json.loads(archive.read("config.json"))["compile_config"]
    assert written["loss"] == _function_entry("mean_squared_error")
    assert written["metrics"] == [
        _function_entry("mean_absolute_error"),
        _function_entry("cc_test>mean_gap"),
    ]
    expected = model.evaluate(X, Y, verbose=0)
    loaded = mk.saving.load_model(tmp_path / "functions.keras")
    assert loaded.evaluate(X, Y, verbose=0) == pytest.approx(expected, rel=1e-6)


def test_keras_loads_a_saved_file_with_function_losses_and_metrics(tmp_path):
    keras = _keras()

    def keras_mean_gap(y_true, y_pred):
        return keras.ops.mean(y_true - y_pred, axis=-1)

    keras_mean_gap.__name__ = "mean_gap"
    keras.saving.register_keras_serializable(package="cc_test")(keras_mean_gap)
    model = _function_compiled(mk, mean_gap)
    model.fit(X, Y, epochs=1, batch_size=4, verbose=0)
    model.save(tmp_path / "functions.keras")
    theirs = keras.saving.load_model(tmp_path / "functions.keras")
    assert theirs.evaluate(X, Y, verbose=0) == pytest.approx(
        model.evaluate(X, Y, verbose=0), rel=1e-5
    )


@mk.saving.register_keras_serializable(package="test_compile_config")
class OwnCompileModel(mk.Sequential):
    """A model whose `compile` takes what the saved compile config does not hold."""

    def compile(self, first_optimizer, second_optimizer, loss=None):
        self.second_optimizer = second_optimizer
        super().compile(optimizer=first_optimizer, loss=loss)


def test_loading_a_model_with_its_own_compile_does_not_call_it(tmp_path):
    # As Keras 3's loading: a custom compile may take other arguments than the config's.
    model = OwnCompileModel([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile("adam", "sgd", loss="mse")
    model.fit(X, Y, epochs=1, verbose=0)
    path = str(tmp_path / "own.keras")
    model.save(path)
    with pytest.warns(UserWarning, match="load_model: OwnCompileModel overrides compile"):
        loaded = mk.saving.load_model(path)
    assert type(loaded) is OwnCompileModel and not loaded.compiled
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))


def test_a_keras_files_config_goes_through_the_models_own_compile_from_config():
    from minikeras.saving.keras_file import _compiled_from_config

    seen = []

    class OwnConfig(mk.Sequential):
        def compile_from_config(self, config):
            seen.append(config)
            super().compile(optimizer="sgd", loss="mae")

    model = OwnConfig([mk.Input((2,)), mk.layers.Dense(1)])
    optimizer = _compiled_from_config(model, {"optimizer": "adam", "loss": "mse"}, "f.keras")
    assert seen == [{"optimizer": "adam", "loss": "mse"}]
    assert type(optimizer).__name__ == "SGD" and optimizer is model.optimizer

    own = OwnCompileModel([mk.Input((2,)), mk.layers.Dense(1)])
    with pytest.warns(UserWarning, match="f.keras: OwnCompileModel overrides compile"):
        assert _compiled_from_config(own, {"optimizer": "adam", "loss": "mse"}, "f.keras") is None
    assert not own.compiled

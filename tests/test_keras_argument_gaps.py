"""Keras 3.15 arguments minikeras took late: callbacks, metrics, saving, tree, serialize names.

`TerminateOnNaN(raise_error)`, `CallbackList(add_progbar)` (and Keras's
positional order), `SparseTopKCategoricalAccuracy(from_sorted_ids)`,
`save_model(zipped)`, `CustomObjectScope(custom_objects)`,
`tree.map_structure(func, none_is_leaf)`, and the argument names of
`dtype_policies.serialize`, `losses.deserialize` and `schedules.serialize`.
"""

import os

import numpy as np
import pytest

import minikeras as mk


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


class _Model:
    stop_training = False


def test_terminate_on_nan_stops_gracefully_by_default(capsys):
    model = _Model()
    callback = mk.callbacks.TerminateOnNaN()
    assert callback.raise_error is False
    callback.set_model(model)
    callback.on_train_batch_end(3, {"loss": 1.0})
    assert model.stop_training is False
    callback.on_train_batch_end(4, {"loss": float("inf")})
    assert model.stop_training is True
    assert "Batch 4" in capsys.readouterr().out


def test_terminate_on_nan_raise_error_raises_and_skips_train_end():
    model = mk.Sequential([mk.Input((1,)), mk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss=lambda y_true, y_pred: mk.ops.log(y_pred * 0.0 - 1.0))
    ended = []
    watcher = mk.callbacks.LambdaCallback(on_train_end=lambda logs: ended.append(True))
    x = np.array([[1.0], [2.0]], "float32")
    with (
        np.errstate(invalid="ignore"),
        pytest.raises(RuntimeError, match="NaN or Inf loss encountered at batch 0"),
    ):
        model.fit(
            x,
            np.ones((2, 1), "float32"),
            batch_size=2,
            verbose=0,
            callbacks=[mk.callbacks.TerminateOnNaN(raise_error=True), watcher],
        )
    assert ended == []


def test_callback_list_add_progbar_and_keras_order():
    history_and_bar = mk.callbacks.CallbackList(None, True, True)  # Keras's positional order
    kinds = [type(c).__name__ for c in history_and_bar.callbacks]
    assert sorted(kinds) == ["History", "ProgbarLogger"]
    given = mk.callbacks.ProgbarLogger()
    kept = mk.callbacks.CallbackList([given], add_progbar=True)
    assert kept.callbacks == [given]
    assert mk.callbacks.CallbackList([]).callbacks == []


def test_sparse_top_k_from_sorted_ids_by_hand():
    fn = mk.metrics.sparse_top_k_categorical_accuracy
    ids = [[1, 0, 3], [1, 2, 3], [5, 5, 4]]
    np.testing.assert_array_equal(fn([2, 1, 5], ids, k=1, from_sorted_ids=True), [0, 1, 1])
    np.testing.assert_array_equal(fn([2, 1, 4], ids, k=2, from_sorted_ids=True), [0, 1, 0])
    np.testing.assert_array_equal(fn([[2], [3], [4]], ids, k=3, from_sorted_ids=True), [0, 1, 1])
    metric = mk.metrics.SparseTopKCategoricalAccuracy(k=1, from_sorted_ids=True)
    metric.update_state([2, 1], [[1, 0, 3], [1, 2, 3]], sample_weight=[0.7, 0.3])
    assert float(metric.result()) == pytest.approx(0.3)
    assert metric.get_config()["from_sorted_ids"] is True
    again = mk.metrics.SparseTopKCategoricalAccuracy.from_config(metric.get_config())
    assert again.from_sorted_ids is True
    assert "from_sorted_ids" not in mk.metrics.SparseTopKCategoricalAccuracy().get_config()


def test_sparse_top_k_from_sorted_ids_matches_keras():
    keras = _keras()
    y_true = np.array([2, 1, 4, 0])
    ids = np.array([[1, 0, 3], [1, 2, 3], [5, 4, 4], [3, 2, 0]])
    for k in (1, 2, 3):
        theirs = keras.metrics.SparseTopKCategoricalAccuracy(k=k, from_sorted_ids=True)
        ours = mk.metrics.SparseTopKCategoricalAccuracy(k=k, from_sorted_ids=True)
        theirs.update_state(y_true, ids)
        ours.update_state(y_true, ids)
        assert float(ours.result()) == pytest.approx(float(theirs.result()))
        assert ours.get_config() == theirs.get_config()


def test_save_model_zipped(tmp_path):
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    mk.saving.save_model(model, tmp_path / "a.keras", zipped=True)
    mk.models.save_model(model, tmp_path / "b.minikeras", zipped=None)
    model.save(tmp_path / "c.keras", zipped=True)
    assert mk.models.load_model(tmp_path / "a.keras").count_params() == 3
    for save in (mk.saving.save_model, mk.models.save_model):
        with pytest.raises(NotImplementedError, match="zipped=False"):
            save(model, tmp_path / "d.keras", zipped=False)
    with pytest.raises(NotImplementedError, match="zipped=False"):
        model.save(tmp_path / "d.keras", zipped=False)
    assert not (tmp_path / "d.keras").exists()


def test_custom_object_scope_keyword_and_nesting():
    with mk.saving.CustomObjectScope(custom_objects={"Outer": len}):
        with mk.utils.custom_object_scope(custom_objects={"Inner": abs}):
            assert mk.saving.get_registered_object("Inner") is abs
            assert mk.saving.get_registered_object("Outer") is len
        assert mk.saving.get_registered_object("Inner") is None
    with mk.saving.custom_object_scope(None):
        assert mk.saving.get_registered_object("Outer") is None


def test_map_structure_none_is_leaf():
    def tag(*leaves):
        return ("f", *leaves)

    assert mk.tree.map_structure(tag, [1, None]) == [("f", 1), ("f", None)]
    structure = [1, None, {"a": None}]
    assert mk.tree.map_structure(tag, structure, none_is_leaf=False) == [
        ("f", 1),
        None,
        {"a": None},
    ]
    assert mk.tree.map_structure(tag, [1, None], [2, None], none_is_leaf=False) == [
        ("f", 1, 2),
        None,
    ]
    assert mk.tree.map_structure(tag, None, none_is_leaf=False) is None
    with pytest.raises(ValueError, match="expected None, got 3"):
        mk.tree.map_structure(tag, [1, None], [2, 3], none_is_leaf=False)


def test_map_structure_none_is_leaf_matches_keras():
    keras = _keras()

    def tag(*leaves):
        return ("f", *leaves)

    for structures in ([[1, None, {"a": None}]], [[1, None], [2, None]], [None]):
        for none_is_leaf in (True, False):
            assert mk.tree.map_structure(
                tag, *structures, none_is_leaf=none_is_leaf
            ) == keras.tree.map_structure(tag, *structures, none_is_leaf=none_is_leaf)


def test_serialize_argument_names_by_keyword():
    policy = mk.dtype_policies.DTypePolicy("mixed_float16")
    assert mk.dtype_policies.serialize(dtype_policy=policy)["config"] == {"name": "mixed_float16"}
    assert mk.losses.deserialize(name="mean_squared_error") is mk.losses.mean_squared_error
    huber = mk.losses.deserialize(name={"class_name": "Huber", "config": {"delta": 2.0}})
    assert huber.delta == 2.0
    schedule = mk.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)
    entry = mk.optimizers.schedules.serialize(learning_rate_schedule=schedule)
    assert mk.optimizers.schedules.deserialize(entry)(10) == pytest.approx(0.05)


def test_loss_config_writes_dtype_only_when_given():
    assert "dtype" not in mk.losses.MeanSquaredError().get_config()
    config = mk.losses.MeanSquaredError(dtype="float64").get_config()
    assert config["dtype"] == "float64"
    assert mk.losses.MeanSquaredError.from_config(config).dtype == "float64"


def test_schedule_default_names_are_keras_strings():
    schedules = mk.optimizers.schedules
    assert schedules.ExponentialDecay(0.1, 10, 0.5).name == "ExponentialDecay"
    assert schedules.PiecewiseConstantDecay([1], [0.1, 0.2]).name == "PiecewiseConstant"
    assert schedules.CosineDecay(0.1, 10, name=None).name == "CosineDecay"


def test_optimizer_loss_scale_and_accumulation_none_only():
    config = mk.optimizers.Adam(loss_scale_factor=None, gradient_accumulation_steps=None)
    assert config.get_config()["gradient_accumulation_steps"] is None
    for argument in ("loss_scale_factor", "gradient_accumulation_steps"):
        with pytest.raises(NotImplementedError, match=f"Adam: `{argument}`"):
            mk.optimizers.Adam(**{argument: 2})


def test_input_takes_keras_arguments_by_keyword():
    x = mk.Input(shape=(2,), sparse=False, ragged=False, tensor=None, optional=False, name="x")
    assert x.shape == (None, 2) and x.name == "x"
    for argument in ("sparse", "ragged", "optional"):
        with pytest.raises(ValueError, match=f"Input: `{argument}=True`"):
            mk.Input((2,), **{argument: True})
    with pytest.raises(ValueError, match="Input: `tensor`"):
        mk.Input((2,), tensor=np.ones((1, 2)))
    assert mk.layers.InputSpec(ndim=2, optional=True).optional is True


def test_save_and_load_weights_take_keras_names(tmp_path):
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    path = tmp_path / "w.weights.minikeras"
    mk.saving.save_weights(model=model, filepath=path, max_shard_size=None)
    other = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    mk.saving.load_weights(model=other, filepath=path)
    np.testing.assert_array_equal(other.layers[0].kernel.numpy(), model.layers[0].kernel.numpy())
    with pytest.raises(NotImplementedError, match="max_shard_size=1"):
        model.save_weights(tmp_path / "x.weights.h5", max_shard_size=1)
    assert not (tmp_path / "x.weights.h5").exists()

"""The log keys of a model with several outputs, as Keras 3 names them.

Keras 3 (`CompileLoss.build`) adds a `<output>_loss` entry per output only
when two or more outputs have a loss: with `loss=[None, "mse"]` the logs
hold `loss` alone (it is that one output's loss). The last test runs Keras
itself, when it is importable, on the same compile arguments.
"""

import numpy as np
import pytest

import minikeras as mk

pytestmark = pytest.mark.filterwarnings("ignore::minikeras.TrackingWarning")  # heads with no loss

X = np.linspace(-1.0, 1.0, 24, dtype="float32").reshape(8, 3)
Y_A = np.ones((8, 1), "float32")
Y_B = np.full((8, 2), 0.5, "float32")

CASES = [
    ([None, "mse"], None, ["loss"]),
    ({"a": None, "b": "mse"}, None, ["loss"]),
    (["mse", None], [["mae"], None], ["a_mae", "loss"]),
    ([None, "mse"], {"a": "mae", "b": "mae"}, ["a_mae", "b_mae", "loss"]),
    (["mse", "mse"], None, ["a_loss", "b_loss", "loss"]),
    ("mse", None, ["a_loss", "b_loss", "loss"]),
]


def _two_heads(mk_module, seed=0):
    inputs = mk_module.Input((3,), name="x")
    a = mk_module.layers.Dense(1, name="a", kernel_initializer="ones")(inputs)
    b = mk_module.layers.Dense(2, name="b", kernel_initializer="zeros")(inputs)
    return mk_module.Model(inputs, [a, b])


@pytest.mark.parametrize(("loss", "metrics", "keys"), CASES)
def test_fit_evaluate_and_history_log_the_keras_keys(loss, metrics, keys):
    model = _two_heads(mk)
    model.compile("sgd", loss, metrics=metrics, report_unchanged=False)
    history = model.fit(X, [Y_A, Y_B], epochs=2, verbose=0)
    assert sorted(history.history) == keys
    assert all(len(values) == 2 for values in history.history.values())
    assert sorted(model.evaluate(X, [Y_A, Y_B], verbose=0, return_dict=True)) == keys
    assert sorted(model.test_on_batch(X, [Y_A, Y_B], return_dict=True)) == keys
    assert sorted(model.train_on_batch(X, [Y_A, Y_B], return_dict=True)) == keys


def test_one_output_with_a_loss_logs_that_loss_alone():
    model = _two_heads(mk)
    model.compile("sgd", [None, "mse"])
    # b's kernel is zeros: b predicts its bias (zeros), so its mse is 0.5 ** 2.
    assert model.evaluate(X, [Y_A, Y_B], verbose=0) == pytest.approx(0.25)
    assert model.metrics_names == ["loss"]


@pytest.mark.parametrize(("loss", "metrics", "keys"), CASES)
def test_log_keys_match_keras(loss, metrics, keys):
    keras = pytest.importorskip("keras")
    reference = _two_heads(keras)
    reference.compile("sgd", loss, metrics=metrics)
    history = reference.fit(X, [Y_A, Y_B], epochs=1, verbose=0)
    assert sorted(history.history) == keys
    assert sorted(reference.evaluate(X, [Y_A, Y_B], verbose=0, return_dict=True)) == keys


def test_metrics_lists_every_metric_after_compile_and_after_the_first_step():
    model = _two_heads(mk)
    model.compile("sgd", ["mse", "mae"], metrics=[["mae"], ["mse"]])
    assert model.metrics_names == ["loss"]  # the per-output ones come with the outputs
    model.fit(X, [Y_A, Y_B], verbose=0)
    assert model.metrics_names == ["loss", "a_loss", "b_loss", "a_mae", "b_mse"]
    single = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    single.compile("sgd", "mse", metrics=["mae"], weighted_metrics=["mse"])
    assert single.metrics_names == ["loss", "mae", "mse"]


def test_keras_groups_the_compiled_metrics_as_documented():
    keras = pytest.importorskip("keras")
    reference = _two_heads(keras)
    reference.compile("sgd", ["mse", "mae"], metrics=[["mae"], ["mse"]])
    assert reference.metrics_names == ["loss", "compile_metrics"]
    reference.fit(X, [Y_A, Y_B], verbose=0)
    assert reference.metrics_names == ["loss", "compile_metrics", "a_loss", "b_loss"]
    assert [m.name for m in reference.metrics[1].metrics] == ["mae", "mse"]  # logged a_, b_
    model = _two_heads(mk)
    model.compile("sgd", ["mse", "mae"], metrics=[["mae"], ["mse"]])
    model.fit(X, [Y_A, Y_B], verbose=0)
    # The same metrics, each listed by minikeras: the per-output losses before the compiled.
    assert model.metrics_names == ["loss", "a_loss", "b_loss", "a_mae", "b_mse"]
    y = [Y_A + 1.0, Y_B]
    ours, theirs = model.evaluate(X, y, verbose=0), reference.evaluate(X, y, verbose=0)
    assert len(ours) == len(theirs) == 5
    assert sorted(model.evaluate(X, y, verbose=0, return_dict=True)) == sorted(
        reference.evaluate(X, y, verbose=0, return_dict=True)
    )


ONE_OUTPUT = [
    ({"a": "mae"}, None, ["loss", "mae"]),
    ([["mae", "mse"]], None, ["loss", "mae", "mse"]),
    (["mae", ["mse"]], None, ["loss", "mae", "mse"]),
    ({"a": ["mae"]}, {"a": ["mse"]}, ["loss", "mae", "mse"]),
    (None, [["mse"]], ["loss", "mse"]),
]


def _one_head(mk_module):
    inputs = mk_module.Input((3,), name="x")
    return mk_module.Model(inputs, mk_module.layers.Dense(1, name="a")(inputs))


@pytest.mark.parametrize(("metrics", "weighted", "keys"), ONE_OUTPUT)
def test_one_output_takes_metrics_by_its_name_or_nested(metrics, weighted, keys):
    model = _one_head(mk)
    model.compile("sgd", "mse", metrics=metrics, weighted_metrics=weighted)
    history = model.fit(X, Y_A, epochs=1, verbose=0)
    assert sorted(history.history) == keys
    logs = model.evaluate(X, Y_A, verbose=0, return_dict=True)
    # mse as the loss and as a metric: one value; mae by hand (a's kernel is random).
    prediction = model.predict(X, verbose=0)
    assert logs["loss"] == pytest.approx(np.mean((prediction - Y_A) ** 2), rel=1e-5)
    if "mae" in logs:
        assert logs["mae"] == pytest.approx(np.mean(np.abs(prediction - Y_A)), rel=1e-5)


def test_one_output_refuses_metrics_keyed_by_another_name():
    model = _one_head(mk)  # (Keras takes any key for one output; a typo is likelier)
    model.compile("sgd", "mse", metrics={"b": "mae"})
    with pytest.raises(ValueError, match=r"metrics has keys \['b'\] .* the output is 'a'"):
        model.fit(X, Y_A, epochs=1, verbose=0)


@pytest.mark.parametrize(("metrics", "weighted", "keys"), ONE_OUTPUT)
def test_one_output_metrics_match_keras(metrics, weighted, keys):
    keras = pytest.importorskip("keras")
    reference = _one_head(keras)
    reference.compile("sgd", "mse", metrics=metrics, weighted_metrics=weighted)
    assert sorted(reference.fit(X, Y_A, epochs=1, verbose=0).history) == keys


def _dict_heads(api):
    inputs = api.Input((3,), name="x")
    heads = {  # not in sorted order
        "zeta": api.layers.Dense(1, name="zeta", kernel_initializer="ones")(inputs),
        "alpha": api.layers.Dense(1, name="alpha", kernel_initializer="zeros")(inputs),
    }
    model = api.Model(inputs, heads)
    model.compile("sgd", loss=["mse", "mae"], loss_weights=[1.0, 2.0], metrics=[["mae"], []])
    return model


def test_lists_for_dict_outputs_follow_the_sorted_keys():
    # Keras 3 flattens a dict of outputs by sorted key: the first loss is alpha's.
    model = _dict_heads(mk)
    y = {"zeta": np.zeros((8, 1), "float32"), "alpha": np.full((8, 1), 3.0, "float32")}
    logs = model.test_on_batch(X, y, return_dict=True)
    predicted = model.predict(X, verbose=0)
    alpha_mse = np.mean((predicted["alpha"] - 3.0) ** 2)
    zeta_mae = np.mean(np.abs(predicted["zeta"]))
    assert logs["alpha_loss"] == pytest.approx(alpha_mse, rel=1e-6)
    assert logs["zeta_loss"] == pytest.approx(zeta_mae, rel=1e-6)
    assert logs["loss"] == pytest.approx(alpha_mse + 2.0 * zeta_mae, rel=1e-6)
    assert logs["alpha_mae"] == pytest.approx(np.mean(np.abs(predicted["alpha"] - 3.0)))
    keras = pytest.importorskip("keras")
    theirs = _dict_heads(keras)
    assert theirs.test_on_batch(X, y, return_dict=True) == pytest.approx(logs, rel=1e-6)


def test_a_loss_dict_must_name_every_output():
    # Keras 3 refuses a loss dict without an output's key (None says "no loss");
    # minikeras took the missing output as one without a loss.
    model = _two_heads(mk)
    model.compile("sgd", loss={"b": "mse"})
    with pytest.raises(ValueError, match=r"lacks the outputs \['a'\]"):
        model.train_on_batch(X, [Y_A, Y_B])
    model.compile("sgd", loss={"a": None, "b": "mse"})
    assert set(model.train_on_batch(X, [Y_A, Y_B], return_dict=True)) == {"loss"}
    keras = pytest.importorskip("keras")
    theirs = _two_heads(keras)
    theirs.compile("sgd", loss={"b": "mse"})
    with pytest.raises(ValueError, match="Expected keys"):
        theirs.train_on_batch(X, [Y_A, Y_B])


def _one_tensor_twice(module, third=False):
    """`Model(x, [y, y])` (and a third output `z` of its own layer if `third`)."""
    inputs = module.Input((3,), name="x")
    y = module.layers.Dense(1, name="d", kernel_initializer="ones")(inputs)
    outputs = [y, y]
    if third:
        outputs.append(module.layers.Dense(1, name="e", kernel_initializer="zeros")(inputs))
    return module.Model(inputs, outputs)


def test_one_tensor_returned_twice_logs_each_output_by_position():
    # Keras names both outputs "d" and keeps one "d_loss"; positions lose nothing.
    model = _one_tensor_twice(mk)
    model.compile("sgd", ["mse", "mae"], metrics=[["mse"], ["mse"]])
    logs = model.test_on_batch(X, [Y_A, 2.0 * Y_A], return_dict=True)
    predicted = X.sum(axis=1, keepdims=True)  # kernel ones, bias zero
    first_mse = np.mean((predicted - 1.0) ** 2)
    second_mae, second_mse = np.mean(np.abs(predicted - 2.0)), np.mean((predicted - 2.0) ** 2)
    assert logs == pytest.approx(
        {
            "loss": first_mse + second_mae,
            "output_0_loss": first_mse,
            "output_1_loss": second_mae,
            "output_0_mse": first_mse,
            "output_1_mse": second_mse,
        },
        rel=1e-6,
    )
    model.compile("sgd", {"output_0": "mse", "output_1": "mae"})  # a loss dict by those names
    logs = model.test_on_batch(X, [Y_A, 2.0 * Y_A], return_dict=True)
    assert logs["output_1_loss"] == pytest.approx(second_mae, rel=1e-6)
    # Once two outputs share a name, every output goes by its position.
    model = _one_tensor_twice(mk, third=True)
    model.compile("sgd", "mse")
    assert sorted(model.test_on_batch(X, [Y_A, Y_A, Y_A], return_dict=True)) == [
        "loss", "output_0_loss", "output_1_loss", "output_2_loss",
    ]  # fmt: skip


def test_one_tensor_returned_twice_keeps_what_keras_logs_and_what_it_drops():
    keras = pytest.importorskip("keras")
    theirs, ours = _one_tensor_twice(keras), _one_tensor_twice(mk)
    for model in (theirs, ours):
        model.compile("sgd", ["mse", "mae"])
    their_logs = theirs.test_on_batch(X, [Y_A, 2.0 * Y_A], return_dict=True)
    our_logs = ours.test_on_batch(X, [Y_A, 2.0 * Y_A], return_dict=True)
    assert sorted(their_logs) == ["d_loss", "loss"]  # two outputs, one name: one entry
    assert our_logs["loss"] == pytest.approx(their_logs["loss"], rel=1e-6)
    assert our_logs["output_1_loss"] == pytest.approx(their_logs["d_loss"], rel=1e-6)

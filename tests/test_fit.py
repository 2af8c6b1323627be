"""fit, evaluate, predict, train_on_batch and test_on_batch: the behaviour a Keras user expects.

Each test trains tiny models on a few dozen samples, so the whole file runs in
a few seconds; the main job's test trains the real MLP on the digits.
"""

import inspect
import os
import re
import signal
import sys
import time
import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras import Model, Sequential, callbacks, layers, losses, metrics, optimizers

# ----------------------------------------------------------------- helpers


@pytest.fixture(autouse=True)
def _seeded():
    """Every test starts from the same initial weights and shuffles: results are deterministic."""
    mk.utils.set_random_seed(0)


def regression_data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32") + 0.3
    return x, y.astype("float32")


def classification_data(n=48, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    x = rng.normal(size=(n, 4)).astype("float32") + 4.0 * np.eye(4, dtype="float32")[y]
    return x, y


def linear_model(units=1, inputs=3, optimizer=None, loss="mse", metrics=None, **compile_kwargs):
    model = Sequential([layers.Input((inputs,)), layers.Dense(units)])
    model.compile(optimizer or optimizers.SGD(0.05), loss, metrics=metrics, **compile_kwargs)
    return model


def snapshot(model):
    return [w.numpy() for w in model.weights]


def assert_weights_equal(model, expected):
    actual = snapshot(model)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        np.testing.assert_array_equal(a, e)


class StepCounter(callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.steps = 0

    def on_train_batch_end(self, batch, logs=None):
        self.steps += 1


class BatchRecorder(Model):
    """A linear model that records the batch sizes and inputs it is called with."""

    def __init__(self):
        super().__init__()
        self.dense = layers.Dense(1)
        self.calls = []

    def call(self, inputs, training=None):
        self.calls.append((bool(training), np.asarray(inputs).copy()))
        return self.dense(inputs)


# ------------------------------------------------------------ the API itself


def test_fit_signature_has_the_keras_arguments_and_defaults():
    parameters = inspect.signature(Model.fit).parameters
    expected = dict(
        batch_size=None, epochs=1, validation_split=0.0, validation_data=None, shuffle=True,
        callbacks=None, verbose="auto", sample_weight=None, class_weight=None, initial_epoch=0,
        steps_per_epoch=None, validation_steps=None,
    )  # fmt: skip
    assert {name: parameters[name].default for name in expected} == expected
    assert list(parameters)[1:3] == ["x", "y"]


def test_fit_returns_a_history_with_one_entry_per_epoch():
    x, y = regression_data()
    model = linear_model(metrics=["mae"])
    history = model.fit(x, y, epochs=4, batch_size=8, verbose=0)
    assert isinstance(history, callbacks.History)
    assert model.history is history
    assert history.epoch == [0, 1, 2, 3]
    assert set(history.history) == {"loss", "mae"}
    assert all(isinstance(v, float) for v in history.history["loss"])
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert history.params == {"epochs": 4, "steps": 5, "verbose": 0}


def test_predict_in_batches_equals_the_unbatched_call():
    x = np.random.default_rng(1).normal(size=(70, 3)).astype("float32")
    model = BatchRecorder()
    model.compile("sgd", "mse")
    whole = model(x).numpy()
    model.calls.clear()
    predicted = model.predict(x, batch_size=32)
    assert [len(inputs) for _, inputs in model.calls] == [32, 32, 6]
    assert isinstance(predicted, np.ndarray) and predicted.shape == (70, 1)
    np.testing.assert_allclose(predicted, whole, rtol=1e-6, atol=1e-6)


def test_evaluate_in_batches_averages_over_samples():
    x, y = regression_data(n=70)
    model = BatchRecorder()
    model.compile("sgd", "mse", metrics=["mae"])
    predictions = model(x).numpy()
    model.calls.clear()
    loss, mae = model.evaluate(x, y, batch_size=32, verbose=0)
    assert [len(inputs) for _, inputs in model.calls] == [32, 32, 6]
    np.testing.assert_allclose(loss, np.mean((predictions - y) ** 2), rtol=1e-5)
    np.testing.assert_allclose(mae, np.mean(np.abs(predictions - y)), rtol=1e-5)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert list(logs) == ["loss", "mae"]


def test_train_on_batch_is_one_step_and_test_on_batch_trains_nothing():
    x, y = regression_data(n=16)
    stepped, fitted = linear_model(metrics=["mae"]), linear_model(metrics=["mae"])
    fitted.set_weights(stepped.get_weights())
    before = snapshot(stepped)

    tested = stepped.test_on_batch(x, y, return_dict=True)
    assert_weights_equal(stepped, before)
    assert list(tested) == ["loss", "mae"]
    np.testing.assert_allclose(tested["loss"], stepped.evaluate(x, y, verbose=0)[0], rtol=1e-6)

    loss, mae = stepped.train_on_batch(x, y)
    assert loss == pytest.approx(tested["loss"], rel=1e-6)
    fitted.fit(x, y, batch_size=16, shuffle=False, verbose=0)
    for a, b in zip(stepped.get_weights(), fitted.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert isinstance(linear_model().train_on_batch(x, y), float)


def test_methods_need_compile_first():
    model = Sequential([layers.Input((3,)), layers.Dense(1)])
    x, y = regression_data(n=4)
    for method, args in [("fit", (x, y)), ("evaluate", (x, y)), ("train_on_batch", (x, y))]:
        with pytest.raises(RuntimeError, match="must be compiled first"):
            getattr(model, method)(*args)
    assert model.predict(x).shape == (4, 1)  # predict needs no loss


# ------------------------------------------------------------------- inputs


def batches_of(x, y, size):
    return [(x[i : i + size], y[i : i + size]) for i in range(0, len(x), size)]


@pytest.mark.parametrize("kind", ["list", "generator"])
def test_an_iterable_of_batches_trains_like_the_arrays(kind):
    x, y = regression_data()
    from_arrays, from_batches = linear_model(), linear_model()
    from_batches.set_weights(from_arrays.get_weights())
    history = from_arrays.fit(x, y, batch_size=10, epochs=2, shuffle=False, verbose=0)
    batches = batches_of(x, y, 10)
    source = batches if kind == "list" else (batch for batch in batches)
    batch_history = from_batches.fit(source, epochs=2, verbose=0)  # a generator is kept
    for a, b in zip(from_arrays.get_weights(), from_batches.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert batch_history.history == history.history
    assert from_batches.evaluate(batches, verbose=0) == pytest.approx(
        from_arrays.evaluate(x, y, batch_size=10, verbose=0), rel=1e-6
    )
    np.testing.assert_array_equal(
        from_batches.predict(iter(batches)), from_arrays.predict(x, batch_size=10)
    )


def test_batches_may_carry_sample_weights():
    x, y = regression_data(n=20)
    weight = np.linspace(0.0, 2.0, 20).astype("float32")
    from_arrays, from_batches = linear_model(), linear_model()
    from_batches.set_weights(from_arrays.get_weights())
    from_arrays.fit(x, y, sample_weight=weight, batch_size=5, shuffle=False, verbose=0)
    batches = [(x[i : i + 5], y[i : i + 5], weight[i : i + 5]) for i in range(0, 20, 5)]
    from_batches.fit(batches, verbose=0)
    for a, b in zip(from_arrays.get_weights(), from_batches.get_weights()):
        np.testing.assert_array_equal(a, b)


def nan_labels(x, y):
    y = y.copy()
    y[7] = np.nan
    return (x, y), {}


def nan_in_a_later_batch(x, y):
    batches = batches_of(x, y, 10)
    bad_y = batches[2][1].copy()
    bad_y[3] = np.nan
    batches[2] = (batches[2][0], bad_y)
    return (batches,), {}


BAD_INPUTS = {
    "x and y lengths differ": (
        lambda x, y: ((x, y[:-1]), {}),
        "x has 40 samples but y has 39",
    ),
    "sample_weight length differs": (
        lambda x, y: ((x, y), {"sample_weight": np.ones(39)}),
        "sample_weight has 39",
    ),
    "NaN in the labels": (nan_labels, r"y holds NaN or infinite values, at sample indices \[7\]"),
    "NaN in a later batch": (nan_in_a_later_batch, r"fit \(batch 2\): y holds NaN"),
    "NaN in sample_weight": (
        lambda x, y: ((x, y), {"sample_weight": np.r_[np.ones(39), np.nan]}),
        "sample_weight holds NaN",
    ),
    "object labels": (
        lambda x, y: ((x, np.array([{"label": 1}] * 40, dtype=object)), {}),
        "y must be numeric, got dtype object",
    ),
    "string sample weights": (
        lambda x, y: ((x, y), {"sample_weight": ["heavy"] * 40}),
        "sample_weight must be numeric",
    ),
    "empty arrays": (
        lambda x, y: ((x[:0], y[:0]), {}),
        r"the data set is empty \(x has 0 samples\)",
    ),
    "empty generator": (lambda x, y: (((b for b in []),), {}), "the data set is empty"),
    "y missing": (lambda x, y: ((x,), {}), "y is missing"),
    "y beside batches": (
        lambda x, y: ((batches_of(x, y, 10), y), {}),
        "y and sample_weight must be None",
    ),
    "validation_split 1": (
        lambda x, y: ((x, y), {"validation_split": 1.0}),
        r"validation_split must be in \[0, 1\), got 1.0",
    ),
    "negative validation_split": (
        lambda x, y: ((x, y), {"validation_split": -0.1}),
        "validation_split must be in",
    ),
    "validation_split leaving nothing": (
        lambda x, y: ((x[:1], y[:1]), {"validation_split": 0.4}),
        "leaves no training or no validation samples out of 1",
    ),
    "validation_split with batches": (
        lambda x, y: ((batches_of(x, y, 10),), {"validation_split": 0.2}),
        "validation_split needs arrays",
    ),
    "bad validation_data": (
        lambda x, y: ((x, y), {"validation_data": (x[:5], y[:4])}),
        r"fit \(validation_data\): x has 5 samples but y has 4",
    ),
    "class_weight with sample_weight": (  # (Keras refuses both at once)
        lambda x, y: (
            (x, np.repeat([0, 1], [30, 10])),
            {"class_weight": {0: 1.0}, "sample_weight": np.ones(40), "batch_size": 8},
        ),
        "class_weight or sample_weight, not both",
    ),
    "batch_size 0": (lambda x, y: ((x, y), {"batch_size": 0}), "batch_size must be an int >= 1"),
    "labels shaped unlike the predictions": (
        lambda x, y: ((x, np.hstack([y, y])), {}),
        r"y_true and y_pred must have the same shape.*\(32, 2\).*\(32, 1\)",
    ),
}


@pytest.mark.parametrize("case", BAD_INPUTS, ids=str)
def test_bad_input_is_a_clear_error_before_any_training(case):
    make, pattern = BAD_INPUTS[case]
    x, y = regression_data()
    args, kwargs = make(x, y)
    model = linear_model()
    before = snapshot(model)
    counter = StepCounter()
    with pytest.raises(ValueError, match=pattern):
        model.fit(*args, verbose=0, callbacks=[counter], **kwargs)
    assert counter.steps == 0
    assert_weights_equal(model, before)


def test_strings_for_a_numeric_model_are_a_clear_error_before_any_training():
    # (strings pass the data checks, for models with an Input(dtype="string") or a
    # StringLookup; a model of numbers refuses them at its first layer, naming it)
    x, y = regression_data()
    model = linear_model()
    before = snapshot(model)
    counter = StepCounter()
    with pytest.raises(TypeError, match=f"'{model.name}' takes numbers.*dtype <U1"):
        model.fit(np.array([["a", "b", "c"]] * 40), y, verbose=0, callbacks=[counter])
    assert counter.steps == 0
    assert_weights_equal(model, before)


def test_evaluate_and_predict_reject_bad_input_too():
    x, y = regression_data()
    model = linear_model()
    with pytest.raises(ValueError, match="evaluate: x has 40 samples but y has 39"):
        model.evaluate(x, y[:-1], verbose=0)
    with pytest.raises(ValueError, match="predict: the input is empty"):
        model.predict(x[:0])
    with pytest.raises(ValueError, match="predict: the input is empty"):
        model.predict(b for b in [])
    with pytest.raises(TypeError, match="takes numbers or booleans, got an input of dtype <U1"):
        model.predict(np.array([["a", "b", "c"]]))
    with pytest.raises(ValueError, match="predict: x must be numeric"):
        model.predict(np.array([[{"a": 1}]], dtype=object))


def test_batch_size_accepts_numpy_integers_and_none():
    x, y = regression_data()
    counter = StepCounter()
    linear_model().fit(x, y, batch_size=np.int64(8), verbose=0, callbacks=[counter])
    linear_model().fit(x, y, batch_size=None, verbose=0, callbacks=[counter])
    assert counter.steps == 5 + 2  # None means Keras's 32


# ----------------------------------------------------------------- progress


def test_verbose_0_prints_nothing(capfd):
    x, y = classification_data()
    model = linear_model(3, 4, loss=losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, epochs=2, validation_split=0.25, verbose=0)
    model.evaluate(x, y, verbose=0)
    model.predict(x, verbose=0)
    assert capfd.readouterr() == ("", "")


def test_verbose_2_prints_one_line_per_epoch(capsys):
    x, y = classification_data()
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    model = linear_model(3, 4, loss=loss, metrics=["accuracy"])
    model.fit(x, y, epochs=3, validation_split=0.25, verbose=2)
    out, err = capsys.readouterr()
    number = r"\d+\.\d{4}"
    line = (
        rf"Epoch (\d)/3 - \d+(ms|\.\ds) - loss: {number} - accuracy: {number} - "
        rf"val_loss: {number} - val_accuracy: {number}"
    )
    lines = out.splitlines()
    assert [re.fullmatch(line, text).group(1) for text in lines] == ["1", "2", "3"]
    assert err == ""
    model.evaluate(x, y, verbose=2)
    assert re.fullmatch(
        rf"Evaluate - .* - loss: {number} - accuracy: {number}\n", capsys.readouterr().out
    )


def test_verbose_1_shows_a_bar_with_steps_times_and_running_logs(capsys):
    pytest.importorskip("tqdm")
    x, y = classification_data()
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    model = linear_model(3, 4, loss=loss, metrics=["accuracy"])
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=1)
    err = capsys.readouterr().err
    for epoch in (1, 2):
        # Step count, elapsed<remaining (the ETA), then the epoch's logs.
        final = re.search(
            rf"Epoch {epoch}/2: 100%.*? 6/6 \[\d\d:\d\d<\d\d:\d\d, .*?, (loss.*?)\]", err
        )
        assert final is not None, err
        expected = mk.progress.format_logs({k: v[epoch - 1] for k, v in history.history.items()})
        assert final.group(1) == expected
    model.evaluate(x, y, verbose="auto")
    assert "Evaluate: 100%" in capsys.readouterr().err


class FakeBar:
    """Stands in for tqdm: records what each redraw (on update and close) would show."""

    def __init__(self, **kwargs):
        self.n, self.postfix, self.shown = 0, "", []

    def set_postfix_str(self, text, refresh=True):
        self.postfix = text

    def update(self, steps):
        self.n += steps
        self.shown.append((self.n, self.postfix))

    def close(self):
        self.shown.append(("closed", self.postfix))


def test_each_redraw_of_the_bar_shows_the_logs_of_the_step_it_counts(monkeypatch):
    monkeypatch.setattr(mk.progress, "tqdm", FakeBar)
    progress = mk.progress.Progress(total=2, verbose=1, description="Epoch 1/1")
    progress.update({"loss": 1.0})
    progress.update({"loss": 0.5})
    progress.close({"loss": 0.75, "val_loss": 0.25})
    assert progress.bar.shown == [
        (1, "loss: 1.0000"),
        (2, "loss: 0.5000"),
        ("closed", "loss: 0.7500 - val_loss: 0.2500"),
    ]


# ---------------------------------------------------------------- NaN losses


def diverged_model():
    """A model whose loss is NaN from its first step (its kernel is): data with NaN is refused."""
    model = linear_model()
    kernel = model.layers[0].kernel
    kernel.assign(np.full(kernel.shape, np.nan, "float32"))
    return model


def test_terminate_on_nan_stops_after_the_bad_step_without_a_warning(capsys):
    x, y = regression_data()
    counter = StepCounter()
    model = diverged_model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither the NaN warning nor numpy's
        history = model.fit(
            x, y, epochs=3, batch_size=8, shuffle=False, verbose=0,
            callbacks=[callbacks.TerminateOnNaN(), counter],
        )  # fmt: skip
    assert counter.steps == 1
    assert history.epoch == [0] and np.isnan(history.history["loss"][0])
    assert "Invalid loss nan, terminating training" in capsys.readouterr().out


def test_a_nan_loss_without_terminate_on_nan_warns_once_and_goes_on():
    x, y = regression_data()
    counter = StepCounter()
    model = diverged_model()
    with pytest.warns(RuntimeWarning, match="the loss became nan at epoch 1, step 1") as caught:
        history = model.fit(
            x, y, epochs=2, batch_size=8, shuffle=False, verbose=0, callbacks=[counter]
        )
    assert len([w for w in caught if issubclass(w.category, RuntimeWarning)]) == 1
    assert counter.steps == 10 and history.epoch == [0, 1]


# -------------------------------------------------------------------- Ctrl-C


@pytest.mark.parametrize("hook", ["on_train_batch_end", "on_train_batch_begin"])
def test_ctrl_c_stops_after_the_current_step_and_restores_the_handler(hook, capsys):
    x, y = regression_data()
    model = linear_model(optimizer="adam")
    after_step = {}
    outside = []  # if fit did not catch the signal, this handler would

    def on_batch_end(batch, logs):
        after_step[len(after_step)] = snapshot(model)
        if hook == "on_train_batch_end" and len(after_step) == 7:
            os.kill(os.getpid(), signal.SIGINT)

    def on_batch_begin(batch, logs):
        if hook == "on_train_batch_begin" and len(after_step) == 6:
            os.kill(os.getpid(), signal.SIGINT)  # during step 7: it still completes

    def handler(signum, frame):
        outside.append(signum)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        history = model.fit(
            x, y, epochs=5, batch_size=8, verbose=0,
            callbacks=[callbacks.LambdaCallback(
                on_train_batch_end=on_batch_end, on_train_batch_begin=on_batch_begin
            )],
        )  # fmt: skip
        assert signal.getsignal(signal.SIGINT) is handler
    finally:
        signal.signal(signal.SIGINT, previous)
    assert outside == []
    assert len(after_step) == 7  # 5 steps per epoch: the second epoch's second step
    assert_weights_equal(model, after_step[6])
    assert not all(np.array_equal(a, b) for a, b in zip(after_step[5], after_step[6]))
    assert isinstance(history, callbacks.History) and history.epoch == [0, 1]
    assert "interrupted" in capsys.readouterr().out


def test_the_sigint_handler_is_restored_when_fit_fails():
    previous = signal.getsignal(signal.SIGINT)
    model = linear_model()
    fail = callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        model.fit(*regression_data(), verbose=0, callbacks=[fail])
    assert signal.getsignal(signal.SIGINT) is previous


# ----------------------------------------------------------- reproducibility


def seeded_fit(seed):
    mk.utils.set_random_seed(seed)
    model = Sequential(
        [
            layers.Input((4,)),
            layers.Dense(8, activation="relu"),
            layers.Dropout(0.3),
            layers.Dense(3),
        ]
    )
    model.compile(
        "adam", losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"]
    )
    x, y = classification_data()
    history = model.fit(x, y, epochs=3, batch_size=8, validation_split=0.25, verbose=0)
    return model.get_weights(), history.history


def test_the_same_seed_gives_identical_weights_and_history():
    weights, history = seeded_fit(7)
    again_weights, again_history = seeded_fit(7)
    assert history == again_history
    for a, b in zip(weights, again_weights):
        np.testing.assert_array_equal(a, b)
    other_weights, _ = seeded_fit(8)
    assert not np.array_equal(weights[0], other_weights[0])


# ------------------------------------------------------- validation, epochs


def test_validation_split_holds_out_the_last_samples_before_shuffling():
    x = np.arange(40, dtype="float32").reshape(40, 1)
    y = 2.0 * x
    model = BatchRecorder()
    model.compile(optimizers.SGD(1e-4), "mse", metrics=["mae"])
    model(x[:1])
    model.calls.clear()
    history = model.fit(x, y, epochs=2, batch_size=8, validation_split=0.25, verbose=0)
    trained = np.concatenate([inputs for training, inputs in model.calls if training])
    validated = np.concatenate([inputs for training, inputs in model.calls if not training])
    assert sorted(trained[:30].ravel()) == list(range(30))  # each epoch sees samples 0..29
    assert not np.array_equal(trained[:30].ravel(), np.arange(30))  # shuffled
    np.testing.assert_array_equal(validated.ravel(), np.tile(np.arange(30, 40), 2))
    assert set(history.history) == {"loss", "mae", "val_loss", "val_mae"}
    val_loss, val_mae = model.evaluate(x[30:], y[30:], verbose=0)
    assert history.history["val_loss"][-1] == pytest.approx(val_loss, rel=1e-6)
    assert history.history["val_mae"][-1] == pytest.approx(val_mae, rel=1e-6)


def test_validation_data_overrides_validation_split():
    x, y = regression_data()
    counter = StepCounter()
    history = linear_model().fit(
        x, y, batch_size=8, validation_split=0.5, validation_data=(x[:8], y[:8]),
        verbose=0, callbacks=[counter],
    )  # fmt: skip
    assert counter.steps == 5  # all 40 samples train
    assert "val_loss" in history.history


def test_validation_data_may_be_an_iterable_of_batches():
    x, y = regression_data()
    model = linear_model()
    history = model.fit(x, y, validation_data=batches_of(x, y, 16), verbose=0)
    assert history.history["val_loss"][0] == pytest.approx(model.evaluate(x, y, verbose=0))


def test_initial_epoch_resumes_the_count(capsys):
    x, y = regression_data()
    model = linear_model()
    history = model.fit(x, y, epochs=5, initial_epoch=3, verbose=2)
    assert history.epoch == [3, 4]
    assert [line.split(" - ")[0] for line in capsys.readouterr().out.splitlines()] == [
        "Epoch 4/5",
        "Epoch 5/5",
    ]


def test_no_epoch_left_trains_nothing_and_reports_nothing():
    x, y = regression_data()
    model = linear_model()
    before = snapshot(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = model.fit(x, y, epochs=2, initial_epoch=2, verbose=0)
    assert history.epoch == [] and history.history == {}
    assert_weights_equal(model, before)


def test_early_stopping_ends_fit_and_the_history_shows_it():
    x, y = regression_data()
    model = linear_model(optimizer=optimizers.SGD(0.0), report_unchanged=False)
    stop = callbacks.EarlyStopping("loss", patience=2)
    history = model.fit(x, y, epochs=20, shuffle=False, verbose=0, callbacks=[stop])
    assert history.epoch == [0, 1, 2]


# ------------------------------------------------ sample and class weights


def one_sgd_step_by_hand(kernel, bias, x, y, weight, learning_rate):
    """MSE summed with weights over the batch, divided by the batch size; one SGD step."""
    error = x @ kernel + bias - y  # (n, 1)
    loss = np.sum(weight[:, None] * error**2) / len(x)
    grad_error = 2.0 * weight[:, None] * error / len(x)
    return (
        kernel - learning_rate * (x.T @ grad_error),
        bias - learning_rate * grad_error.sum(0),
        loss,
    )


def tiny_problem():
    x = np.array([[1.0, 2.0], [0.5, -1.0], [-2.0, 0.0], [3.0, 1.0]], "float32")
    y = np.array([[1.0], [0.0], [1.0], [0.0]], "float32")
    kernel = np.array([[0.3], [-0.2]], "float32")
    bias = np.array([0.1], "float32")
    model = Sequential([layers.Input((2,)), layers.Dense(1)])
    model.compile(optimizers.SGD(learning_rate=0.1), "mse", metrics=["mae"])
    model.set_weights([kernel, bias])
    return model, x, y, kernel, bias


@pytest.mark.parametrize(
    "sample_weight, class_weight, weight",
    [
        (None, None, [1.0, 1.0, 1.0, 1.0]),
        ([1.0, 2.0, 0.5, 0.0], None, [1.0, 2.0, 0.5, 0.0]),
        (None, {0: 1.0, 1: 3.0}, [3.0, 1.0, 3.0, 1.0]),
        (None, {1: 1.0, 2: 5.0}, [1.0, 1.0, 1.0, 1.0]),  # (class 0 left out: it weighs 1)
    ],
    ids=["unweighted", "sample_weight", "class_weight", "class left out"],
)
def test_one_step_matches_the_update_computed_by_hand(sample_weight, class_weight, weight):
    model, x, y, kernel, bias = tiny_problem()
    history = model.fit(
        x, y, batch_size=4, shuffle=False, verbose=0,
        sample_weight=None if sample_weight is None else np.array(sample_weight),
        class_weight=class_weight,
    )  # fmt: skip
    new_kernel, new_bias, loss = one_sgd_step_by_hand(
        kernel, bias, x, y, np.array(weight, "float32"), 0.1
    )
    np.testing.assert_allclose(model.get_weights()[0], new_kernel, rtol=1e-6)
    np.testing.assert_allclose(model.get_weights()[1], new_bias, rtol=1e-6)
    assert history.history["loss"][0] == pytest.approx(loss, rel=1e-6)
    # Compiled metrics are not weighted, as in Keras (that is what weighted_metrics are for).
    assert history.history["mae"][0] == pytest.approx(
        np.mean(np.abs(x @ kernel + bias - y)), rel=1e-6
    )


def test_class_weight_and_sample_weight_together_are_refused_as_in_keras():
    model, x, y, _, _ = tiny_problem()
    with pytest.raises(ValueError, match="class_weight or sample_weight, not both"):
        model.fit(x, y, sample_weight=np.ones(4), class_weight={0: 1.0, 1: 3.0}, verbose=0)


def test_class_weight_applies_to_training_not_to_validation():
    model, x, y, kernel, bias = tiny_problem()
    history = model.fit(
        np.vstack([x, x]), np.vstack([y, y]), batch_size=4, shuffle=False, verbose=0,
        validation_split=0.5, class_weight={0: 1.0, 1: 3.0},
    )  # fmt: skip
    unweighted = model.evaluate(x, y, verbose=0)[0]
    assert history.history["val_loss"][0] == pytest.approx(unweighted, rel=1e-6)


def test_train_on_batch_takes_class_weight():
    model, x, y, kernel, bias = tiny_problem()
    model.train_on_batch(x, y, class_weight={0: 1.0, 1: 3.0})
    new_kernel, _, _ = one_sgd_step_by_hand(kernel, bias, x, y, np.array([3, 1, 3, 1.0]), 0.1)
    np.testing.assert_allclose(model.get_weights()[0], new_kernel, rtol=1e-6)


# ------------------------------------------------------------------ metrics


@pytest.mark.parametrize(
    "loss, labels, expected",
    [
        ("sparse_categorical_crossentropy", "int", metrics.SparseCategoricalAccuracy),
        (
            losses.SparseCategoricalCrossentropy(from_logits=True),
            "int",
            metrics.SparseCategoricalAccuracy,
        ),
        ("categorical_crossentropy", "one_hot", metrics.CategoricalAccuracy),
        ("binary_crossentropy", "binary", metrics.BinaryAccuracy),
        (losses.BinaryCrossentropy(from_logits=True), "binary", metrics.BinaryAccuracy),
    ],
    ids=["sparse-name", "sparse-object", "categorical", "binary-name", "binary-logits"],
)
def test_accuracy_resolves_per_loss_and_logs_as_accuracy(loss, labels, expected):
    x, y = classification_data()
    if labels == "one_hot":
        y = np.eye(3, dtype="float32")[y]
    elif labels == "binary":
        y = (y == 0).astype("float32").reshape(-1, 1)
    units = 1 if labels == "binary" else 3
    activation = "softmax" if units == 3 else "sigmoid"
    if isinstance(loss, losses.Loss) and loss.from_logits:
        activation = None
    model = Sequential([layers.Input((4,)), layers.Dense(units, activation=activation)])
    model.compile(optimizers.Adam(0.05), loss, metrics=["accuracy"])
    assert [m.name for m in model.metrics] == ["loss", "accuracy"]
    assert type(model.metrics[1]) is expected
    history = model.fit(x, y, epochs=10, batch_size=8, validation_split=0.25, verbose=0)
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    _, accuracy = model.evaluate(x, y, verbose=0)
    predictions = model.predict(x)
    if units == 3:
        right = predictions.argmax(-1) == (y.argmax(-1) if y.ndim == 2 else y)
    else:
        threshold = 0.0 if activation is None else 0.5
        right = (predictions > threshold) == (y > 0.5)
    assert accuracy == pytest.approx(np.mean(right))
    assert accuracy > 0.9


# ----------------------------------------------------------------- main job


def test_the_main_job_reaches_96_percent_on_the_digits(capsys):
    from minikeras.__main__ import main

    start = time.perf_counter()
    assert main(["--epochs", "30"]) == 0
    seconds = time.perf_counter() - start
    out = capsys.readouterr().out
    accuracy = float(re.search(r"^test accuracy: (\d\.\d+)", out, re.MULTILINE).group(1))
    assert accuracy >= 0.96, out
    assert seconds < 30


# ------------------------------------------- steps_per_epoch and friends: generators


class CountingBatches:
    """Yields the given batches, forever (`cycle`) or once, counting what was drawn."""

    def __init__(self, batches, cycle=True):
        self.batches, self.cycle, self.drawn = batches, cycle, 0

    def generator(self):
        while True:
            for batch in self.batches:
                self.drawn += 1
                yield batch
            if not self.cycle:
                return


def _distinct_batches(count, size=4, seed=1):
    x, y = regression_data(n=count * size, seed=seed)
    return batches_of(x, y, size)


def test_steps_per_epoch_draws_from_a_generator_that_never_ends():
    batches = _distinct_batches(6)
    source = CountingBatches(batches)
    carried, one_pass = linear_model(), linear_model()
    one_pass.set_weights(carried.get_weights())
    history = carried.fit(source.generator(), epochs=2, steps_per_epoch=3, verbose=0)
    assert len(history.history["loss"]) == 2
    assert source.drawn == 6  # epoch 2 carries on where epoch 1 stopped, as in Keras
    one_pass.fit(batches, epochs=1, verbose=0)  # the same six SGD steps
    for a, b in zip(carried.get_weights(), one_pass.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_a_generator_that_runs_out_stops_training_with_a_warning():
    batches = _distinct_batches(5)
    source = CountingBatches(batches, cycle=False)
    model, reference = linear_model(), linear_model()
    reference.set_weights(model.get_weights())
    with pytest.warns(UserWarning) as caught:
        history = model.fit(source.generator(), epochs=4, steps_per_epoch=2, verbose=0)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert re.search(r"ran out in epoch 3 after 5 steps.*steps_per_epoch \* epochs = 8", message)
    assert len(history.history["loss"]) == 3  # 2 + 2 + 1 steps, and no fourth epoch
    assert source.drawn == 5
    reference.fit(batches, epochs=1, verbose=0)
    for a, b in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_a_list_shorter_than_steps_per_epoch_ends_the_epoch_and_starts_over():
    batches = _distinct_batches(3)
    counter = StepCounter()
    model = linear_model()
    with pytest.warns(UserWarning) as caught:
        history = model.fit(batches, epochs=2, steps_per_epoch=4, callbacks=[counter], verbose=0)
    assert [str(w.message)[:45] for w in caught] == [
        f"fit: epoch {epoch} ended after 3 of steps_per_epoch=4 steps"[:45] for epoch in (1, 2)
    ]
    assert len(history.history["loss"]) == 2
    assert counter.steps == 6


def test_validation_steps_and_evaluate_and_predict_steps_take_that_many_batches():
    batches = _distinct_batches(4)
    training, validation = CountingBatches(batches), CountingBatches(batches)
    model = linear_model()
    history = model.fit(
        training.generator(),
        epochs=3,
        steps_per_epoch=2,
        validation_data=validation.generator(),
        validation_steps=2,
        verbose=0,
    )
    # As Keras: each epoch's validation starts from the beginning, on the same two batches
    # (read once from a generator).
    assert validation.drawn == 2 and len(history.history["val_loss"]) == 3
    again = model.evaluate(batches[:2], verbose=0)
    assert history.history["val_loss"][-1] == pytest.approx(again, rel=1e-6)
    evaluated = CountingBatches(batches)
    loss = model.evaluate(evaluated.generator(), steps=3, verbose=0)
    assert evaluated.drawn == 3
    assert loss == pytest.approx(model.evaluate(batches[:3], verbose=0), rel=1e-6)
    predicted = model.predict(CountingBatches(batches).generator(), steps=2)
    np.testing.assert_allclose(
        predicted, model.predict(np.concatenate([b[0] for b in batches[:2]])), rtol=1e-6
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda m, x, y: m.fit(x, y, steps_per_epoch=1.5, verbose=0),
            r"fit: steps_per_epoch must be an int >= 1 or None, got 1.5 \(float\)",
        ),
        (
            lambda m, x, y: m.evaluate(x, y, steps=0, verbose=0),
            r"evaluate: steps must be an int >= 1 or None, got 0",
        ),
        (
            lambda m, x, y: m.fit(batches_of(x, y, 8), steps_per_epoch=0, verbose=0),
            r"fit: steps_per_epoch must be an int >= 1 or None, got 0",
        ),
        (
            lambda m, x, y: m.predict(iter([x]), steps="2"),
            r"predict: steps must be an int >= 1 or None, got '2' \(str\)",
        ),
    ],
)
def test_steps_arguments_are_checked(call, message):
    x, y = regression_data(n=16)
    with pytest.raises((TypeError, ValueError), match=message):
        call(linear_model(), x, y)


class EpochCounter(callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.begun, self.ended = 0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.begun += 1

    def on_epoch_end(self, epoch, logs=None):
        self.ended += 1


@pytest.mark.parametrize("steps", [2, 4])
def test_a_list_of_a_multiple_of_steps_per_epoch_trains_every_epoch_without_warning(steps):
    batches = _distinct_batches(4)
    counter = StepCounter()
    model = linear_model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = model.fit(
            batches,
            epochs=3,
            steps_per_epoch=steps,
            validation_data=batches[:2],
            validation_steps=2,
            callbacks=[counter],
            verbose=0,
        )
    assert counter.steps == 3 * steps
    assert len(history.history["loss"]) == len(history.history["val_loss"]) == 3


def test_a_generator_that_runs_out_at_an_epoch_boundary_ends_training_cleanly():
    source = CountingBatches(_distinct_batches(4), cycle=False)
    epochs = EpochCounter()
    with pytest.warns(UserWarning) as caught:
        history = linear_model().fit(
            source.generator(), epochs=3, steps_per_epoch=2, callbacks=[epochs], verbose=0
        )
    assert [str(w.message)[:44] for w in caught] == [
        "fit: the data ran out in epoch 3 after 4 steps"[:44]
    ]
    assert (epochs.begun, epochs.ended, len(history.history["loss"])) == (2, 2, 2)


def test_evaluate_warns_when_the_data_ends_before_steps():
    model = linear_model()
    with pytest.warns(UserWarning, match=r"evaluate: the data ran out before steps=5"):
        loss = model.evaluate(iter(_distinct_batches(2)), steps=5, verbose=0)
    assert loss == pytest.approx(model.evaluate(_distinct_batches(2), verbose=0))


@pytest.mark.parametrize(
    "arguments, error, message",
    [
        ({"epochs": 1.5}, TypeError, r"fit: epochs must be an int >= 0, got 1.5 \(float\)"),
        ({"epochs": "2"}, TypeError, r"fit: epochs must be an int >= 0, got '2' \(str\)"),
        ({"epochs": None}, TypeError, r"fit: epochs must be an int >= 0, got None"),
        ({"epochs": -1}, ValueError, r"fit: epochs must be an int >= 0, got -1"),
        ({"validation_split": "0.2"}, TypeError, r"fit: validation_split must be a number"),
        ({"validation_split": 1.0}, ValueError, r"fit: validation_split must be in \[0, 1\)"),
        ({"batch_size": -3}, ValueError, r"fit: batch_size must be an int >= 1 or None, got -3"),
        ({"batch_size": 2.0}, TypeError, r"fit: batch_size must be an int"),
        ({"verbose": 3}, ValueError, r"fit: verbose must be 'auto', 0, 1 or 2, got 3"),
        ({"shuffle": "yes"}, TypeError, r"fit: shuffle must be True, False or 'batch'"),
        ({"initial_epoch": -2}, ValueError, r"fit: initial_epoch must be an int >= 0"),
    ],
)
def test_fit_arguments_are_named_before_anything_trains(arguments, error, message):
    x, y = regression_data(n=16)
    model = linear_model()
    before = [w.copy() for w in model.get_weights()]
    with pytest.raises(error, match=message):
        model.fit(x, y, **{"verbose": 0, **arguments})
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))


def test_zero_epochs_stays_valid_as_in_keras():
    x, y = regression_data(n=16)
    model = linear_model()
    before = [w.copy() for w in model.get_weights()]
    history = model.fit(x, y, epochs=0, verbose=0)
    assert history.history == {} or all(len(v) == 0 for v in history.history.values())
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))


def test_evaluate_and_predict_arguments_are_named():
    x, y = regression_data(n=16)
    model = linear_model()
    with pytest.raises(ValueError, match="evaluate: batch_size must be an int >= 1"):
        model.evaluate(x, y, batch_size=0, verbose=0)
    with pytest.raises(ValueError, match="predict: verbose must be"):
        model.predict(x, verbose=5)


def test_validation_data_may_be_a_list_as_in_keras():
    model, x, y, _, _ = tiny_problem()
    as_list = model.fit(x, y, validation_data=[x, y], verbose=0, shuffle=False)
    assert as_list.history["val_loss"][0] == pytest.approx(model.evaluate(x, y, verbose=0)[0])


def test_predict_keeps_nested_outputs_nested_across_uneven_batches():
    # A stacked RNN's states come as [output, [h, c], h2], as in Keras: predict keeps that.
    cells = [mk.layers.LSTMCell(3), mk.layers.SimpleRNNCell(2)]
    inputs = mk.Input((4, 2))
    outputs = mk.layers.RNN(cells, return_state=True)(inputs)
    model = mk.Model(inputs, outputs)
    x = np.random.default_rng(0).standard_normal((5, 4, 2)).astype("float32")
    predicted = model.predict(x, batch_size=2, verbose=0)  # batches of 2, 2 and 1
    whole = model(x)
    assert len(predicted) == 3 and len(predicted[1]) == 2
    np.testing.assert_allclose(predicted[0], whole[0].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(predicted[1][0], whole[1][0].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(predicted[1][1], whole[1][1].numpy(), rtol=1e-5, atol=1e-6)
    assert predicted[1][0].shape == (5, 3) and predicted[2].shape == (5, 2)


def test_tqdm_is_imported_at_the_first_bar_not_with_minikeras():
    pytest.importorskip("tqdm")
    import subprocess

    script = (
        "import sys, numpy as np, minikeras as mk\n"
        "first = 'tqdm' in sys.modules\n"
        "model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])\n"
        "model.compile('sgd', 'mse')\n"
        "model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0)\n"
        "quiet = 'tqdm' in sys.modules\n"
        "model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=1)\n"
        "print(first, quiet, 'tqdm' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "True"]


def test_without_tqdm_a_bar_is_one_line_per_epoch(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # (importing it raises ImportError)
    monkeypatch.setattr(mk.progress, "tqdm", mk.progress._NOT_LOOKED_UP)
    progress = mk.progress.Progress(total=2, verbose=1, description="Epoch 1/1", file=sys.stdout)
    progress.update({"loss": 1.0})
    progress.close({"loss": 0.5})
    assert progress.bar is None and mk.progress.tqdm is None
    assert re.fullmatch(r"Epoch 1/1 - .*s - loss: 0\.5000\n", capsys.readouterr().out)

"""`fit`'s quiet epochs: when nobody reads a batch's logs, the default step makes none.

With no progress bar and no callback's batch hook, and the default
`compute_metrics`, each step of an epoch updates the weights, the loss
tracker and the compiled metrics without making its logs dict
(`trainers.steps.train_update`); the epoch's logs are made once at its end.
Everything a user can see must be as in an epoch whose batches are read.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import callbacks, layers, losses, optimizers
from minikeras.trainers import fit_loop


def classification_data(n=45, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    x = rng.normal(size=(n, 4)).astype("float32") + 3.0 * np.eye(4, dtype="float32")[y]
    return x, y


def classifier(optimizer="adam", metrics=("accuracy",), jit_compile="auto"):
    model = mk.Sequential([layers.Input((4,)), layers.Dense(5, activation="relu"), layers.Dense(3)])
    model.compile(
        optimizer,
        losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=list(metrics),
        jit_compile=jit_compile,
    )
    return model


class ReadsBatches(callbacks.Callback):
    """A callback that reads every batch's logs (so the epoch is not quiet)."""

    def __init__(self):
        super().__init__()
        self.logs = []

    def on_train_batch_end(self, batch, logs=None):
        self.logs.append(dict(logs))


def counted(monkeypatch):
    """Counts the default step's two bodies as `fit` calls them."""
    calls = {"train_step": 0, "train_update": 0}
    for name in calls:
        original = getattr(fit_loop, name)

        def spy(*args, original=original, name=name):
            calls[name] += 1
            return original(*args)

        monkeypatch.setattr(fit_loop, name, spy)
    return calls


def fitted(monkeypatch, read, make=classifier, seed=3, **fit_kwargs):
    """A model trained with every batch read or none; its weights, history and step counts."""
    x, y = classification_data()
    mk.utils.set_random_seed(seed)
    model = make()
    reader = ReadsBatches()
    calls = counted(monkeypatch)
    fit_kwargs = {"epochs": 3, "batch_size": 8, "verbose": 0, **fit_kwargs}
    history = model.fit(x, y, callbacks=[reader] if read else [], **fit_kwargs)
    monkeypatch.undo()
    return model, history.history, calls, reader


@pytest.mark.parametrize(
    "make, fit_kwargs",
    [
        (classifier, {}),
        (classifier, {"shuffle": True, "validation_split": 0.2}),
        (classifier, {"sample_weight": np.linspace(0.5, 1.5, 45).astype("float32")}),
        (classifier, {"class_weight": {0: 1.0, 1: 2.0, 2: 0.5}}),
        (lambda: classifier(optimizers.SGD(0.1), metrics=()), {}),
        (lambda: classifier(jit_compile=False), {"steps_per_epoch": 3}),
    ],
    ids=["arrays", "shuffled-validated", "sample-weights", "class-weights", "sgd", "eager-steps"],
)
def test_a_quiet_epoch_trains_and_logs_as_an_epoch_whose_batches_are_read(
    make, fit_kwargs, monkeypatch
):
    quiet_model, quiet_history, quiet_calls, _ = fitted(monkeypatch, False, make, **fit_kwargs)
    read_model, read_history, read_calls, reader = fitted(monkeypatch, True, make, **fit_kwargs)
    steps = read_calls["train_step"]
    assert quiet_calls == {"train_step": 0, "train_update": steps} and steps >= 9
    assert read_calls["train_update"] == 0
    assert quiet_history == read_history  # bit for bit, validation and metrics included
    assert reader.logs[-1] == {k: v[-1] for k, v in read_history.items() if k[:4] != "val_"}
    for got, want in zip(quiet_model.weights, read_model.weights, strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert int(quiet_model.optimizer.iterations.numpy()) == steps


def test_a_nan_loss_in_a_quiet_epoch_warns_as_in_a_read_one(monkeypatch):
    x, y = classification_data()
    messages = {}
    for read in (False, True):
        model = classifier()
        kernel = model.layers[0].kernel
        kernel.assign(np.full(kernel.shape, np.nan, "float32"))
        with pytest.warns(RuntimeWarning, match="the loss became nan at epoch 1, step 1") as got:
            model.fit(x, y, epochs=2, batch_size=8, verbose=0, callbacks=[ReadsBatches()] * read)
        messages[read] = [str(w.message) for w in got if issubclass(w.category, RuntimeWarning)]
    assert messages[False] == messages[True] and len(messages[False]) == 1


def test_a_quiet_epoch_keeps_a_custom_steps_logs_and_a_custom_metrics_call(monkeypatch):
    class OwnLogs(mk.Sequential):
        def train_step(self, data):
            logs = super().train_step(data)
            return {**logs, "seen": 1.0}

    class OwnMetrics(mk.Sequential):
        calls = 0

        def compute_metrics(self, x, y, y_pred, sample_weight=None):
            OwnMetrics.calls += 1
            return {**super().compute_metrics(x, y, y_pred, sample_weight), "mine": 2.0}

    x, y = classification_data()
    for cls in (OwnLogs, OwnMetrics):
        model = cls([layers.Input((4,)), layers.Dense(3)])
        model.compile("adam", losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, epochs=2, batch_size=9, verbose=0).history
        assert set(history) == {"loss", "seen" if cls is OwnLogs else "mine"}
    assert OwnMetrics.calls == 10  # every batch: an overridden compute_metrics is not quiet


def test_epoch_callbacks_still_stop_a_quiet_fit():
    x, y = classification_data()
    model = classifier()
    stop = callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: setattr(model, "stop_training", epoch == 1)
    )
    history = model.fit(x, y, epochs=5, batch_size=8, verbose=0, callbacks=[stop])
    assert history.epoch == [0, 1]
    assert set(history.history) == {"loss", "accuracy"}


def test_a_custom_step_returning_no_logs_fails_as_it_did_before_quiet_epochs():
    class NoLogs(mk.Sequential):
        def train_step(self, data):
            super().train_step(data)

    x, y = classification_data()
    model = NoLogs([layers.Input((4,)), layers.Dense(3)])
    model.compile("adam", losses.SparseCategoricalCrossentropy(from_logits=True))
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'items'"):
        model.fit(x, y, epochs=1, batch_size=9, verbose=0)

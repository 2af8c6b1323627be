"""Bad input found before anything trains, failures that change nothing, and figures that matter."""

import threading
import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers


def _classifier(outputs=4):
    model = mk.Sequential([mk.Input((3,)), layers.Dense(outputs)])
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def _unchanged(model, before):
    return all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))


# ------------------------------------------- in-memory data: every sample before any step


def test_a_bad_label_late_in_the_data_is_refused_before_the_first_step():
    model = _classifier()
    y = np.zeros(64, int)
    y[50] = 9  # in the 7th batch of 8
    before = model.get_weights()
    with pytest.raises(ValueError, match=r"y holds the label 9 at sample 50.*labels in \[0, 4\)"):
        model.fit(np.ones((64, 3)), y, batch_size=8, verbose=0)
    assert _unchanged(model, before)


def test_an_embedding_id_out_of_range_is_refused_before_the_first_step():
    model = mk.Sequential([mk.Input((2,), dtype="int32"), layers.Embedding(5, 2),
                           layers.Flatten(), layers.Dense(2)])  # fmt: skip
    model.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    ids = np.ones((64, 2), int)
    ids[50, 0] = 7
    before = model.get_weights()
    with pytest.raises(
        ValueError, match=r"Embedding 'embedding.*' hold the id 7 at sample 50.*\[0, 5\)"
    ):
        model.fit(ids, np.zeros(64, int), batch_size=8, verbose=0)
    assert _unchanged(model, before)
    with pytest.raises(ValueError, match=r"Embedding .*input_dim|ids in \[0, 5\)"):
        model.layers[0](np.array([[1, 7]]))  # called directly: also named, never an IndexError


@pytest.mark.parametrize("where", ["x", "y"])
def test_nan_or_inf_in_the_data_is_refused_naming_the_sample(where):
    model = mk.Sequential([mk.Input((3,)), layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = np.ones((32, 3)), np.ones((32, 1))
    (x if where == "x" else y)[20, 0] = np.inf
    before = model.get_weights()
    with pytest.raises(
        ValueError, match=rf"fit: {where} holds (inf at sample 20|NaN or inf.*\[20\])"
    ):
        model.fit(x, y, batch_size=8, verbose=0)
    assert _unchanged(model, before)


# ------------------------------------------ streamed data: a bad batch restores the last epoch


def test_a_bad_streamed_batch_stops_fit_and_restores_the_last_completed_epoch():
    model = mk.Sequential([mk.Input((3,)), layers.Dense(1)])
    model.compile("adam", "mse")
    rng = np.random.default_rng(0)
    good = [(rng.standard_normal((4, 3)), rng.standard_normal((4, 1))) for _ in range(3)]
    bad = (np.ones((4, 5)), np.ones((4, 1)))  # another width

    def batches():
        yield from good  # epoch 1
        yield good[0]  # epoch 2, first batch: trains
        yield bad

    reference = mk.Sequential([mk.Input((3,)), layers.Dense(1)])
    reference.set_weights(model.get_weights())
    reference.compile("adam", "mse")
    reference.fit(iter(good), epochs=1, steps_per_epoch=3, verbose=0)
    with pytest.raises(ValueError, match="fit: batch 1 of epoch 2 failed.*last completed epoch"):
        model.fit(batches(), epochs=2, steps_per_epoch=3, verbose=0)
    for a, b in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert int(model.optimizer.iterations.numpy()) == 3


@pytest.mark.parametrize("use_ema", [False, True])
def test_a_bad_streamed_batch_in_the_first_epoch_says_the_steps_before_it_stay(use_ema):
    model = mk.Sequential([mk.Input((3,)), layers.Dense(1)])
    model.compile(mk.optimizers.Adam(use_ema=use_ema), "mse")
    rng = np.random.default_rng(0)
    good = [(rng.standard_normal((4, 3)), rng.standard_normal((4, 1))) for _ in range(3)]
    bad = (np.ones((4, 5)), np.ones((4, 1)))
    before = model.get_weights()
    told = "No epoch completed: the weights keep the updates of the 3 batches before it"
    if use_ema:
        told += ", then take their moving averages"
    with pytest.raises(ValueError, match="fit: batch 3 of epoch 1 failed.*" + told):
        model.fit(iter([*good, bad]), epochs=1, steps_per_epoch=5, verbose=0)
    assert not _unchanged(model, before)  # what the message says: the 3 steps stay
    assert int(model.optimizer.iterations.numpy()) == 3


def test_a_bad_first_streamed_batch_leaves_the_model_unchanged_and_says_so():
    model = mk.Sequential([mk.Input((3,)), layers.Dense(1)])
    model.compile("adam", "mse")
    before = model.get_weights()
    bad = (np.ones((4, 5)), np.ones((4, 1)))
    with pytest.raises(
        ValueError, match=r"batch 0 of epoch 1 failed.*unchanged \(no step had run\)"
    ):
        model.fit(iter([bad]), epochs=1, steps_per_epoch=1, verbose=0)
    assert _unchanged(model, before)


# --------------------------------------------------- random state after a failed fit


class FailsWhenTraining(layers.Layer):
    def call(self, inputs, training=None):
        if training:
            raise RuntimeError("this layer cannot train")
        return inputs


def test_a_fit_that_fails_on_its_first_step_leaves_the_random_state_where_it_was():
    model = mk.Sequential([mk.Input((3,)), layers.Dense(1), FailsWhenTraining()])
    model.compile("sgd", "mse")
    x, y = np.ones((16, 3)), np.ones((16, 1))
    mk.utils.set_random_seed(7)
    state = mk.random.generator().bit_generator.state
    with pytest.raises(RuntimeError, match="cannot train"):
        model.fit(x, y, batch_size=4, verbose=0)  # shuffling drew from the stream first
    assert mk.random.generator().bit_generator.state == state
    working = mk.Sequential([mk.Input((3,)), layers.Dense(1)])
    working.compile("sgd", "mse")
    working.fit(x, y, batch_size=4, verbose=0)  # a fit that runs does advance it
    assert mk.random.generator().bit_generator.state != state


# -------------------------------------------------------------- metrics and class weights


def test_auc_thresholds_follow_keras_grid_and_a_coarse_grid_gives_the_known_value():
    auc = mk.metrics.AUC(num_thresholds=5)
    eps = 1e-7
    np.testing.assert_allclose(
        np.asarray(auc.thresholds), [-eps, 0.25, 0.5, 0.75, 1.0 + eps], rtol=0, atol=1e-9
    )
    coarse = mk.metrics.AUC(num_thresholds=3)
    coarse.update_state([0, 1], [0.4, 0.6])
    assert float(coarse.result()) == pytest.approx(1.0)


def test_class_weight_changes_training_as_a_weighted_gradient_step():
    x = np.array([[1.0], [1.0]], "float32")
    y = np.array([0, 1])

    def one_step(class_weight):
        model = mk.Sequential([mk.Input((1,)), layers.Dense(2, kernel_initializer="zeros")])
        loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
        # Unweighted, the two samples' gradients cancel: nothing moves, on purpose.
        model.compile(mk.optimizers.SGD(1.0), loss, report_unchanged=False)
        model.fit(x, y, batch_size=2, epochs=1, shuffle=False, verbose=0,
                  class_weight=class_weight)  # fmt: skip
        return model.layers[0].kernel.numpy()[0]

    plain, weighted = one_step(None), one_step({0: 1.0, 1: 3.0})
    # Logits 0: softmax (0.5, 0.5). d loss / d logit = p - onehot, weighted by sample, and
    # the weighted mean divides by the number of samples (Keras's sum_over_batch_size).
    np.testing.assert_allclose(plain, [0.0, 0.0], atol=1e-7)  # the two samples cancel
    # Sample 0 (label 0): (p - onehot) = (-0.5, 0.5), weight 1; sample 1: (0.5, -0.5), weight 3.
    gradient = (np.array([-0.5, 0.5]) * 1 + np.array([0.5, -0.5]) * 3) / 2
    expected = -1.0 * gradient  # one SGD step of rate 1 from zeros
    np.testing.assert_allclose(weighted, expected, rtol=1e-6)


# ---------------------------------------------------------------- load and concurrency


def test_four_threads_predicting_on_one_model_match_serial_calls():
    mk.utils.set_random_seed(0)
    model = mk.Sequential([mk.Input((8,)), layers.Dense(16, activation="relu"), layers.Dense(3)])
    batches = [
        np.random.default_rng(i).standard_normal((32, 8)).astype("float32") for i in range(8)
    ]
    serial = [model.predict(batch, verbose=0) for batch in batches]
    results = [[None] * len(batches) for _ in range(4)]
    errors = []

    def work(slot):
        try:
            for _ in range(5):
                for index, batch in enumerate(batches):
                    results[slot][index] = model.predict(batch, verbose=0)
        except Exception as error:  # surfaced below, not lost in the thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(slot,)) for slot in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not errors
    for slot in results:
        for got, expected in zip(slot, serial):
            np.testing.assert_array_equal(got, expected)


def test_two_hundred_save_load_cycles_leave_no_stray_files_and_load_exactly(tmp_path):
    model = mk.Sequential([mk.Input((3,)), layers.Dense(2)])
    model.compile("adam", "mse")
    x, y = np.ones((4, 3), "float32"), np.ones((4, 2), "float32")
    for cycle in range(200):
        suffix = ".keras" if cycle % 2 else ".minikeras"
        path = tmp_path / f"model{suffix}"
        model.save(path)
        loaded = mk.models.load_model(path)
        for a, b in zip(loaded.get_weights(), model.get_weights()):
            np.testing.assert_array_equal(a, b)
        if cycle % 50 == 0:
            model.train_on_batch(x, y)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.keras", "model.minikeras"]


@pytest.mark.parametrize(
    "arguments, error, message",
    [
        ({"metrics": "accuracy"}, TypeError, r"metrics must be a list.*metrics=\['accuracy'\]"),
        ({"report_unchanged": "yes"}, TypeError, "report_unchanged must be True or False"),
        ({"optimizer": 5}, ValueError, "optimizers.get: expected a name"),
        ({"loss": 3}, ValueError, "losses.get: expected a loss name"),
    ],
)
def test_compile_arguments_are_named(arguments, error, message):
    model = mk.Sequential([mk.Input((3,)), layers.Dense(2)])
    with pytest.raises(error, match=message):
        model.compile(**{"optimizer": "sgd", "loss": "mse", **arguments})
    assert not getattr(model, "compiled", False)

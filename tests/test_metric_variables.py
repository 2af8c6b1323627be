"""Custom metrics written as in Keras 3: state from `add_variable`, reset by default.

The metrics here are the ones Keras's guides write: a `Metric` subclass whose
`__init__` calls `self.add_variable(...)`, whose `update_state` assigns to the
variables, and which has no `reset_state` of its own.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import metrics, ops


class BinaryTruePositives(metrics.Metric):
    """The Keras guide's example, with minikeras ops."""

    def __init__(self, name="binary_true_positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.true_positives = self.add_variable(shape=(), initializer="zeros", name="tp")

    def update_state(self, y_true, y_pred, sample_weight=None):
        values = np.logical_and(np.asarray(y_true, bool), np.asarray(y_pred) > 0.5)
        values = ops.cast(values, self.dtype)
        if sample_weight is not None:
            values = ops.multiply(values, ops.cast(sample_weight, self.dtype))
        self.true_positives.assign(self.true_positives + ops.sum(values))

    def result(self):
        return self.true_positives


class RunningRange(metrics.Metric):
    """Variables with non-zero initial values, and assign_sub."""

    def __init__(self, name="running_range"):
        super().__init__(name=name)
        self.low = self.add_variable((), mk.initializers.Constant(np.inf), name="low")
        self.high = self.add_variable((), initializer=mk.initializers.Constant(-np.inf))
        self.spread = self.add_variable((2,), "ones", dtype="float64", name="spread")

    def update_state(self, values):
        self.low.assign(min(float(self.low), float(np.min(values))))
        self.high.assign(max(float(self.high), float(np.max(values))))
        self.spread.assign_sub([1.0, 2.0])

    def result(self):
        return float(self.high) - float(self.low)


def test_add_variable_gives_tracked_non_trainable_variables():
    metric = RunningRange()
    assert metric.variables == [metric.low, metric.high, metric.spread]
    assert all(isinstance(v, mk.Variable) and not v.trainable for v in metric.variables)
    assert metric.low.dtype == np.float32 and metric.spread.dtype == np.float64
    assert metric.low.shape == () and metric.spread.shape == (2,)
    assert metric.low.name == "low"


def test_update_uses_assign_add_and_sub_and_accumulates_over_batches():
    metric = BinaryTruePositives()
    metric.update_state([1, 1, 0, 1], [0.9, 0.2, 0.8, 0.7])  # 2 true positives
    metric.update_state([1, 1], [0.6, 0.6], sample_weight=[0.5, 2.0])  # 2.5 more
    assert float(metric.result()) == pytest.approx(4.5)
    metric.true_positives.assign_sub(0.5)
    metric.true_positives.assign_add(1.0)
    assert float(metric.result()) == pytest.approx(5.0)


def test_default_reset_state_restores_the_initial_values():
    metric = RunningRange()
    metric.update_state([3.0, -1.0])
    metric.update_state([7.0])
    assert metric.result() == 8.0
    np.testing.assert_array_equal(metric.spread.numpy(), [-1.0, -3.0])
    metric.reset_state()
    assert float(metric.low) == np.inf and float(metric.high) == -np.inf
    np.testing.assert_array_equal(metric.spread.numpy(), [1.0, 1.0])
    metric.update_state([2.0, 4.0])
    assert metric.result() == 2.0


def test_variables_and_reset_reach_metrics_held_as_attributes():
    class Pair(metrics.Metric):
        def __init__(self):
            super().__init__(name="pair")
            self.count = self.add_variable((), "zeros", name="count")
            self.inner = BinaryTruePositives()

        def update_state(self, y_true, y_pred):
            self.count.assign_add(len(y_true))
            self.inner.update_state(y_true, y_pred)

        def result(self):
            return float(self.inner.result()) / float(self.count)

    metric = Pair()
    assert metric.variables == [metric.count, metric.inner.true_positives]
    metric.update_state([1, 0, 1, 1], [0.9, 0.9, 0.1, 0.8])
    assert metric.result() == 0.5
    metric.reset_state()
    assert float(metric.count) == 0.0 and float(metric.inner.result()) == 0.0


def test_add_variable_before_super_init_is_a_clear_error():
    class Forgot(metrics.Metric):
        def __init__(self):
            self.total = self.add_variable((), "zeros")

    with pytest.raises(RuntimeError, match=r"Forgot.*super\(\).__init__\(\)"):
        Forgot()


def test_unknown_initializer_is_an_error():
    with pytest.raises(ValueError, match="nonsense"):
        metrics.Mean().add_variable((), "nonsense")


def test_add_weight_is_the_older_name():
    metric = metrics.Mean()
    weight = metric.add_weight(shape=(3,), name="w")
    np.testing.assert_array_equal(weight.numpy(), np.zeros(3, "float32"))
    assert weight in metric.variables


def test_custom_metric_in_fit_resets_each_epoch():
    x = np.array([[1.0], [-1.0], [2.0], [-2.0]], "float32")
    y = np.array([[1.0], [0.0], [1.0], [0.0]], "float32")
    model = mk.Sequential([mk.Input((1,)), mk.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="sgd", loss="binary_crossentropy", metrics=[BinaryTruePositives()])
    history = model.fit(x, y, epochs=3, batch_size=2, verbose=0)
    counts = history.history["binary_true_positives"]
    # Each epoch counts afresh: never more than the two positives in the data.
    assert len(counts) == 3 and all(0.0 <= count <= 2.0 for count in counts)
    predicted = model.predict(x, verbose=0)
    expected = float(np.sum((predicted[:, 0] > 0.5) & (y[:, 0] == 1)))
    assert model.evaluate(x, y, verbose=0, return_dict=True)["binary_true_positives"] == expected


def test_repr_shows_a_scalar_variable_result_as_a_number():
    metric = BinaryTruePositives()
    metric.update_state([1, 1], [0.9, 0.8])
    assert repr(metric) == "<BinaryTruePositives name='binary_true_positives' result=2>"

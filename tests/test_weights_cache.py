"""`weights` and `trainable_weights` are cached, and every change to what is tracked shows.

A walk of a layer's attributes costs tens of µs and a training step asks
twice; the cache must hold between steps and must never serve a stale list:
each test changes tracking one way and checks the lists against the change.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import Layer, Sequential, Variable
from minikeras.layers import Dense, weight_order


class Holder(Layer):
    """A layer whose attributes the tests fill in by hand."""

    def call(self, inputs):
        return inputs


def built_dense(units=2, inputs=3):
    layer = Dense(units)
    layer.build((None, inputs))
    return layer


def names(weights):
    return [w.name for w in weights]


@pytest.fixture
def walks(monkeypatch):
    """Counts the full walks that weight lists make."""
    count = [0]
    original = weight_order.in_keras_order

    def counting(root, held):
        count[0] += 1
        return original(root, held)

    monkeypatch.setattr(weight_order, "in_keras_order", counting)
    return count


def test_repeated_reads_walk_once(walks):
    model = Sequential([Dense(4), Dense(2)])
    model.build((None, 3))
    first = model.trainable_weights
    for _ in range(5):
        assert model.trainable_weights == first
        assert model.weights == first
    assert walks[0] == 1
    assert len(first) == 4


def test_returned_lists_are_copies():
    layer = built_dense()
    layer.trainable_weights.clear()
    layer.weights.append("junk")
    assert names(layer.weights) == ["kernel", "bias"]
    assert names(layer.trainable_weights) == ["kernel", "bias"]


def test_setting_and_deleting_an_attribute_invalidates(walks):
    holder = Holder()
    assert holder.weights == []
    holder.extra = Variable(np.zeros(2), name="extra")
    assert names(holder.weights) == ["extra"]
    holder.sub = built_dense()
    assert names(holder.weights) == ["extra", "kernel", "bias"]
    del holder.extra
    assert names(holder.weights) == ["kernel", "bias"]
    holder.sub = None  # (Keras's tracker keeps a layer an attribute let go of: layer_record)
    assert names(holder.weights) == ["kernel", "bias"]
    holder.sub2 = built_dense()
    assert names(holder.weights) == ["kernel", "bias"] * 2


def test_mutating_a_tracked_list_through_a_kept_reference_invalidates():
    holder = Holder()
    holder.blocks = []
    blocks = holder.blocks  # (the attribute holds a copy of what it is given, as in Keras)
    assert holder.weights == []
    blocks.append(built_dense())
    assert names(holder.trainable_weights) == ["kernel", "bias"]
    blocks.insert(0, built_dense(units=5))
    assert [w.shape for w in holder.weights] == [(3, 2), (2,), (3, 5), (5,)]
    blocks.pop()
    assert [w.shape for w in holder.weights] == [(3, 5), (5,)]


def test_mutating_a_nested_dict_invalidates():
    holder = Holder()
    holder.table = {"outer": ({"inner": []},)}
    assert holder.weights == []
    holder.table["outer"][0]["inner"].append(Variable(np.ones(3), name="deep"))
    assert names(holder.weights) == ["deep"]
    holder.table["other"] = Variable(np.ones(1), name="other")
    assert names(holder.weights) == ["deep", "other"]
    del holder.table["outer"]
    assert names(holder.weights) == ["other"]


def test_a_change_inside_a_sublayer_invalidates_its_parents():
    inner = Holder()
    outer = Holder()
    outer.inner = inner
    model = Sequential([outer])
    assert model.weights == []
    inner.scale = Variable(np.ones(2), name="scale")
    assert names(model.weights) == ["scale"]
    assert names(outer.weights) == ["scale"]


def test_trainable_flags_invalidate_the_trainable_lists():
    layer = built_dense()
    assert names(layer.non_trainable_weights) == []
    layer.bias.trainable = False
    assert names(layer.trainable_weights) == ["kernel"]
    assert names(layer.non_trainable_weights) == ["bias"]
    layer.trainable = False
    assert layer.trainable_weights == []
    assert names(layer.non_trainable_weights) == ["kernel", "bias"]
    layer.trainable = True
    assert names(layer.trainable_weights) == ["kernel"]  # bias was frozen by hand


def test_build_and_add_weight_invalidate():
    layer = Dense(3)
    assert layer.weights == []
    layer.build((None, 2))
    assert names(layer.weights) == ["kernel", "bias"]
    layer.add_weight(shape=(1,), name="unassigned")
    assert names(layer.weights) == ["kernel", "bias", "unassigned"]


def test_sequential_add_and_pop_invalidate():
    model = Sequential([Dense(2)])
    model.build((None, 3))
    assert len(model.weights) == 2
    model.add(Dense(4))
    model.build((None, 3))
    assert len(model.weights) == 4
    model.pop()
    assert len(model.weights) == 2


def test_train_on_batch_sees_a_layer_appended_after_its_first_call():
    # train_on_batch finds weights and loss sources from the cached walk; a layer
    # appended to a tracked list must count from the next call on.
    class Blocks(mk.Model):
        def __init__(self):
            super().__init__()
            self.blocks = [mk.layers.Dense(2, kernel_initializer="ones")]

        def call(self, inputs):
            for block in self.blocks:
                inputs = block(inputs)
            return inputs

    model = Blocks()
    model.compile("sgd", "mse")
    x, y = np.ones((4, 3), "float32"), np.zeros((4, 2), "float32")
    before = float(model.test_on_batch(x, y))
    model.train_on_batch(x, y)
    model.blocks.append(mk.layers.ActivityRegularization(l1=100.0))
    assert any(
        isinstance(layer, mk.layers.ActivityRegularization)
        for layer in mk.layers.tracking.tracked_layers(model)
    )
    assert float(model.train_on_batch(x, y)) > before + 10

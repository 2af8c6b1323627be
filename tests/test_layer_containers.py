"""The lists and dicts at layer attributes that record their edits: ordinary code still works.

`layers/layer_containers.py` copies a list or dict of layers assigned to a
layer attribute into one that records when a layer goes in or out (Keras's
order). Code that rebuilds containers by their type (`type(x)(items)`:
configs, `tree`, a layer's inputs), copies them, or swaps a trained model's
head must keep working as it did with plain lists.
"""

import copy
import warnings
from collections import OrderedDict

import numpy as np

import minikeras as mk
from minikeras.layers import Dense, Layer
from minikeras.layers.layer_containers import RecordedList, RecordedOrderedDict

X = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)


@mk.saving.register_keras_serializable("test_layer_containers")
class Tower(Layer):
    """Keras's documented pattern: sub-layers in a list, serialized in `get_config`."""

    def __init__(self, blocks=None, **kwargs):
        super().__init__(**kwargs)
        self.blocks = []
        for block in blocks or []:
            if not isinstance(block, Layer):
                block = mk.saving.deserialize_keras_object(block)
            self.blocks.append(block)

    def call(self, x):
        for block in self.blocks:
            x = block(x)
        return x

    def get_config(self):
        return {**super().get_config(), "blocks": mk.saving.serialize_keras_object(self.blocks)}


def test_a_recorded_list_rebuilt_by_its_type_keeps_its_items_and_records_nothing():
    owner = Layer()
    owner.blocks = [Dense(2)]
    assert type(owner.blocks) is RecordedList
    rebuilt = type(owner.blocks)(item for item in owner.blocks)
    assert list(rebuilt) == list(owner.blocks)
    rebuilt.append(Dense(3))  # (records for no one)
    assert len(owner.blocks) == 1


def test_a_layer_holding_its_blocks_in_a_list_serializes_clones_and_loads(tmp_path):
    inputs = mk.Input((3,))
    tower = Tower([Dense(4, activation="relu"), Dense(3)])
    model = mk.Model(inputs, Dense(2)(tower(inputs)))
    assert len(tower.get_config()["blocks"]) == 2
    clone = mk.models.clone_model(model)
    assert len(clone.weights) == len(model.weights) == 6
    model.save(tmp_path / "m.keras")
    loaded = mk.saving.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))


def test_tree_functions_a_layers_inputs_and_the_tape_take_recorded_lists():
    class Net(mk.Model):
        def __init__(self):
            super().__init__()
            self.extra = []
            self.named = {}

        def build(self, shape):
            self.extra.append(self.add_weight(shape=(3,), initializer="ones", name="e0"))
            self.extra.append(self.add_weight(shape=(3,), initializer="ones", name="e1"))
            self.named["w"] = self.add_weight(shape=(3,), initializer="ones", name="w")

        def call(self, x):
            return x * self.extra[0] + self.extra[1] * self.named["w"]

    model = Net()
    model(X)
    doubled = mk.tree.map_structure(lambda v: v.numpy() * 2, model.extra)
    assert [list(a) for a in doubled] == [[2.0] * 3, [2.0] * 3]
    with mk.GradientTape() as tape:
        total = mk.ops.sum(model(X))
    grads = tape.gradient(total, [model.extra, {"w": model.named["w"]}])
    assert [g.shape for g in grads[0]] == [(3,), (3,)] and grads[1]["w"].shape == (3,)
    holder = Layer()
    holder.parts = []
    holder.parts.append(X)
    holder.parts.append(X)
    assert mk.layers.Concatenate()(holder.parts).shape == (8, 6)


def test_an_ordered_dict_of_layers_is_placed_as_keras_places_it_without_warnings():
    class Net(mk.Model):
        def __init__(self):
            super().__init__()
            self.blocks = OrderedDict()
            self.head = Dense(2, name="head")
            for name in ("b1", "b2"):
                self.blocks[name] = Dense(4, name=name)

        def call(self, x):
            for block in self.blocks.values():
                x = block(x)
            return self.head(x)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = Net()
        model(X)
    assert type(model.blocks) is RecordedOrderedDict
    # Keras 3.15.1: ['head', 'b1', 'b2'] (the head went in first)
    assert [layer.name for layer in model.layers] == ["head", "b1", "b2"]
    model.blocks.move_to_end("b1")
    assert list(model.blocks) == ["b2", "b1"]


def test_a_head_swapped_after_training_lets_the_old_head_go_without_warnings():
    class Net(mk.Model):
        def __init__(self):
            super().__init__()
            self.body = [Dense(8, activation="relu")]
            self.head = Dense(3)

        def call(self, x):
            return self.head(self.body[0](x))

    model = Net()
    model.compile("adam", "mse")
    model.fit(X, np.ones((8, 3)), verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.head = Dense(5)
        model.compile("adam", "mse")
        model.fit(X, np.ones((8, 5)), verbose=0)
    assert [w.shape for w in model.weights] == [(3, 8), (8,), (8, 5), (5,)]


def test_a_copy_of_a_recorded_list_alone_is_a_plain_list_that_copies_no_owner():
    model = mk.Model()
    model.blocks = [Dense(2)]
    alone = copy.deepcopy(model.blocks)
    assert type(alone) is list and alone[0] is not model.blocks[0]
    assert type(copy.copy(model.blocks)) is list
    twin = copy.deepcopy(model)
    assert type(twin.blocks) is RecordedList and twin.blocks[0] is not model.blocks[0]
    twin.blocks.append(Dense(3, name="added"))
    assert [layer.name for layer in twin.layers][-1] == "added"
    assert len(model.layers) == 1

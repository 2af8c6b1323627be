"""Tracking: which weights and layers a layer holds, and what it says about the rest.

Weights are found by walking attributes through lists, dicts and tuples, so
ordinary container edits need no special types. Whatever escapes (a set, a
plain object, a closure, a global, something made inside call()) is reported
with a `TrackingWarning` that names it and the fix.
"""

import warnings
from collections import namedtuple

import numpy as np
import pytest

import minikeras
from minikeras import Layer, Model, Sequential, TrackingWarning, Variable, ops
from minikeras.layers import Dense, tracking


def tracking_warnings(function):
    """Runs `function()` and returns the TrackingWarning messages it emitted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        function()
    return [str(w.message) for w in caught if issubclass(w.category, TrackingWarning)]


def run_silently(function):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function()
    assert [str(w.message) for w in caught] == []
    return result


class Holder(Layer):
    """A layer whose attributes the tests fill in by hand."""

    def call(self, inputs):
        return inputs


def names(layer):
    return [w.name for w in layer.weights]


def variable(name, size=2):
    return Variable(np.ones(size, dtype="float32"), name=name)


def built_dense(name):
    dense = Dense(1, name=name)
    dense.build((None, 1))
    return dense


# --------------------------------------------------------------------- containers


def test_layers_and_variables_in_nested_lists_dicts_and_tuples_are_tracked():
    holder = Holder()
    holder.nested = {"a": [variable("a0"), (variable("a1"), {"deep": [variable("a2")]})]}
    holder.pair = (built_dense("in_tuple"), [built_dense("in_list_in_tuple")])
    assert names(holder) == ["a0", "a1", "a2", "kernel", "bias", "kernel", "bias"]
    assert tracking.tracked_layers(holder) == [holder.pair[0], holder.pair[1][0]]
    assert not hasattr(holder, "layers")  # (as Keras: `hasattr(layer, "layers")` finds models)


def test_list_edits_are_tracked():
    holder = Holder()
    holder.items = [variable("first")]
    holder.items.append(variable("appended"))
    holder.items.extend([variable("extended")])
    holder.items.insert(0, variable("inserted"))
    holder.items += [variable("added")]
    assert sorted(names(holder)) == ["added", "appended", "extended", "first", "inserted"]
    holder.items[0] = variable("replaced")
    assert "inserted" not in names(holder) and "replaced" in names(holder)
    holder.items[1:3] = [variable("sliced")]
    assert "first" not in names(holder) and "appended" not in names(holder)
    del holder.items[-1]
    assert "added" not in names(holder)
    assert sorted(names(holder)) == ["extended", "replaced", "sliced"]
    holder.items.pop()
    holder.items.remove(holder.items[0])
    assert names(holder) == ["sliced"]


def test_dict_edits_are_tracked():
    holder = Holder()
    holder.table = {}
    holder.table["set"] = variable("set")
    holder.table.setdefault("default", variable("default"))
    holder.table.update(updated=variable("updated"))
    holder.table |= {"merged": variable("merged")}
    assert names(holder) == ["set", "default", "updated", "merged"]
    del holder.table["set"]
    holder.table.pop("default")
    assert names(holder) == ["updated", "merged"]


def test_layers_in_lists_and_dicts_are_tracked_through_edits():
    holder = Holder()
    holder.blocks = []
    holder.blocks.append(built_dense("one"))
    holder.blocks += [built_dense("two")]
    holder.by_name = {}
    holder.by_name["three"] = built_dense("three")
    assert [layer.name for layer in tracking.tracked_layers(holder)] == ["one", "two", "three"]
    assert len(holder.weights) == 6
    del holder.blocks[0]
    holder.by_name.clear()
    assert [layer.name for layer in tracking.tracked_layers(holder)] == ["two"]


def test_a_layer_put_in_where_kerass_tracker_does_not_look_is_left_out_with_a_warning():
    # Keras's TrackedDict has no setdefault, its TrackedList no __setitem__: the layer
    # put in is in no `_layers`, so in no `weights`; the one replaced stays.
    holder = Holder()
    holder.by_name = {}
    with pytest.warns(TrackingWarning, match="'three' is held by"):
        holder.by_name.setdefault("three", built_dense("three"))
        assert tracking.tracked_layers(holder) == [] and holder.weights == []
    first = built_dense("first")
    holder.blocks = [first]
    with pytest.warns(TrackingWarning, match="'second' is held by"):
        holder.blocks[0] = built_dense("second")
        assert tracking.tracked_layers(holder) == [first]
    holder.blocks = holder.blocks  # (setting the attribute again tracks what it holds)
    assert [layer.name for layer in tracking.tracked_layers(holder)] == ["first", "second"]


def test_namedtuples_are_tracked():
    Pair = namedtuple("Pair", ["encoder", "scale"])
    holder = Holder()
    holder.parts = Pair(built_dense("encoder"), variable("scale"))
    assert tracking.tracked_layers(holder) == [holder.parts.encoder]
    # The holder's own weight first, then its sub-layer's (Keras 3's order).
    expected = [holder.parts.scale, holder.parts.encoder.kernel, holder.parts.encoder.bias]
    assert [id(w) for w in holder.weights] == [id(w) for w in expected]


def test_reassigning_or_deleting_an_attribute_untracks_what_it_held():
    holder = Holder()
    holder.block = built_dense("old")
    holder.weight = variable("w")
    holder.blocks = [built_dense("listed")]
    assert len(holder.weights) == 5
    holder.block = built_dense("new")
    # Keras's tracker keeps a layer an attribute let go of, in its place (see layer_record).
    assert [layer.name for layer in tracking.tracked_layers(holder)] == ["old", "listed", "new"]
    del holder.weight  # (Keras's __delattr__ untracks a Variable)
    holder.blocks = None
    assert len(holder.weights) == 6 and holder.weights[4] is holder.block.kernel


def test_deleting_or_reassigning_a_weight_made_with_add_weight_untracks_it():
    class Resettable(Layer):
        def build(self, input_shape):
            self.kernel = self.add_weight("kernel", shape=(input_shape[-1], 2))
            self.bias = self.add_weight("bias", shape=(2,), initializer="zeros")

        def call(self, inputs):
            return inputs @ self.kernel + self.bias

    layer = Resettable()
    layer(np.ones((1, 3)))
    old_kernel = layer.kernel
    del layer.bias
    assert names(layer) == ["kernel"]
    layer.kernel = layer.add_weight("kernel", shape=(3, 2))
    assert layer.weights == [layer.kernel] and layer.kernel is not old_kernel
    assert layer.count_params() == 6
    # A weight still held elsewhere stays tracked there.
    layer.alias = layer.kernel
    layer.kernel = None
    assert layer.weights == [layer.alias]


def test_a_weight_made_with_add_weight_but_never_assigned_is_still_tracked():
    layer = Layer()
    weight = layer.add_weight(shape=(2,))
    assert layer.weights == [weight]


def test_tracking_order_is_deterministic():
    def make():
        holder = Holder(name="same")
        holder.table = {"z": built_dense("z"), "a": built_dense("a")}
        holder.items = [variable("v1"), variable("v2")]
        return [(row.path, row.shape) for row in holder.tracking_report().rows]

    first, second = make(), make()
    assert first == second
    # In `weights` order, Keras 3's: the holder's own Variables, then its sub-layers'.
    assert [path for path, _ in first] == [
        "items[0]",
        "items[1]",
        "table['z']/kernel",
        "table['z']/bias",
        "table['a']/kernel",
        "table['a']/bias",
    ]


def test_a_layer_reached_twice_is_listed_once():
    holder = Holder()
    shared = built_dense("shared")
    holder.first, holder.again, holder.listed = shared, shared, [shared, shared]
    assert tracking.tracked_layers(holder) == [shared] and len(holder.weights) == 2


def test_a_container_holding_itself_does_not_loop():
    holder = Holder()
    loop = [variable("in_loop")]
    loop.append(loop)
    holder.loop = loop
    assert names(holder) == ["in_loop"]


# ------------------------------------------------ 1. untracked Variables read in call()

GLOBAL_SCALE = Variable(np.full(3, 2.0, dtype="float32"), name="global_scale")


class UsesGlobal(Layer):
    def call(self, inputs):
        return inputs * GLOBAL_SCALE


class Box:
    """A plain object: tracking does not look inside it."""

    def __init__(self, value):
        self.value = value


def test_a_global_variable_read_in_call_is_flagged_once_naming_it_the_layer_and_the_fix():
    layer = UsesGlobal(name="uses_global")
    with pytest.warns(TrackingWarning) as record:
        layer(np.ones((1, 3)))
    messages = [str(w.message) for w in record if issubclass(w.category, TrackingWarning)]
    assert len(messages) == 1
    assert "'global_scale'" in messages[0] and "'uses_global'" in messages[0]
    assert "will not be trained or saved" in messages[0] and "add_weight" in messages[0]
    assert tracking_warnings(lambda: layer(np.ones((1, 3)))) == []


def test_a_variable_in_a_plain_object_is_flagged():
    class InObject(Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.box = Box(Variable(np.ones(3, dtype="float32"), name="boxed"))

        def call(self, inputs):
            return inputs * self.box.value

    layer = InObject(name="in_object")
    messages = tracking_warnings(lambda: layer(np.ones((1, 3))))
    assert any("'boxed'" in m and "will not be trained or saved" in m for m in messages)
    assert any("'in_object.box.value'" in m and "Box object" in m for m in messages)
    assert layer.weights == []


def test_a_variable_in_a_user_subclass_of_a_minikeras_initializer_is_flagged():
    # The scan passes minikeras's own initializers by (they hold none), by their
    # class's module: a subclass defined elsewhere is still looked into.
    class ScaledOnes(minikeras.initializers.Ones):
        def __init__(self):
            self.scale = Variable(np.full(3, 2.0, dtype="float32"), name="hidden_scale")

    class Holder(Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.init = ScaledOnes()
            self.spec_like = minikeras.layers.InputSpec(ndim=2)

        def call(self, inputs):
            return inputs * self.init.scale

    messages = tracking_warnings(lambda: Holder(name="holder")(np.ones((1, 3))))
    assert any("'hidden_scale'" in m and "'holder.init.scale'" in m for m in messages)


def test_a_variable_in_a_set_is_flagged():
    class InSet(Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.scales = {Variable(np.ones(3, dtype="float32"), name="in_set")}

        def call(self, inputs):
            for scale in self.scales:
                inputs = inputs * scale
            return inputs

    messages = tracking_warnings(lambda: InSet(name="set_user")(np.ones((1, 3))))
    assert any("'in_set'" in m and "will not be trained or saved" in m for m in messages)
    assert any("set_user.scales{...}" in m for m in messages)


def test_a_variable_in_a_closure_is_flagged():
    def make_scaler():
        hidden = Variable(np.ones(3, dtype="float32"), name="closed_over")
        return lambda x: x * hidden

    class InClosure(Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.scaler = make_scaler()

        def call(self, inputs):
            return self.scaler(inputs)

    with pytest.warns(TrackingWarning, match="'closed_over'.*'in_closure'.*not be trained"):
        InClosure(name="in_closure")(np.ones((1, 3)))


def test_a_layer_that_is_not_part_of_the_model_is_flagged_naming_the_layer_that_used_it():
    outsider = Dense(3, name="outsider")

    class UsesOutsider(Model):
        def __init__(self):
            super().__init__(name="uses_outsider")
            self.inside = Dense(3)

        def call(self, inputs):
            return outsider(self.inside(inputs))

    model = UsesOutsider()
    messages = tracking_warnings(lambda: model(np.ones((1, 3))))
    assert len(messages) == 2  # kernel and bias, once each
    assert all("'outsider'" in m and "'uses_outsider'" in m for m in messages)
    assert {m.split("'")[1] for m in messages} == {"kernel", "bias"}
    assert tracking_warnings(lambda: model(np.ones((1, 3)))) == []
    assert len(model.weights) == 2


def test_a_tf_style_variable_assigned_in_build_is_tracked_and_not_flagged():
    class TFStyle(Layer):
        def build(self, input_shape):
            self.kernel = minikeras.Variable(
                np.ones((input_shape[-1], 2), dtype="float32"), name="kernel"
            )

        def call(self, inputs):
            return inputs @ self.kernel

    layer = TFStyle()
    run_silently(lambda: layer(np.ones((1, 3))))
    assert layer.weights == [layer.kernel]


# ------------------------------------------ 2. layers and Variables created in call()


def test_a_dense_created_inside_call_is_flagged_naming_the_enclosing_layer():
    class MakesDense(Layer):
        def call(self, inputs):
            return Dense(2)(inputs)

    layer = MakesDense(name="makes_dense")
    with pytest.warns(
        TrackingWarning, match=r"inside call\(\) of 'makes_dense'.*__init__\(\) or build\(\)"
    ):
        layer(np.ones((1, 3)))
    assert layer.weights == []
    assert tracking_warnings(lambda: layer(np.ones((1, 3)))) == []  # once


def test_a_variable_created_inside_call_is_flagged():
    class MakesVariable(Layer):
        def call(self, inputs):
            fresh = Variable(np.ones(3, dtype="float32"), name="fresh")
            return inputs * fresh

    layer = MakesVariable(name="makes_variable")
    messages = tracking_warnings(lambda: layer(np.ones((1, 3))))
    assert len(messages) == 1
    assert "'fresh'" in messages[0] and "inside call() of 'makes_variable'" in messages[0]
    assert "build()" in messages[0] and "__init__()" in messages[0]


def test_add_weight_inside_call_is_flagged():
    class AddsInCall(Layer):
        def call(self, inputs):
            return inputs * self.add_weight("late", shape=(3,))

    messages = tracking_warnings(lambda: AddsInCall(name="adds_in_call")(np.ones((1, 3))))
    assert len(messages) == 1 and "'late'" in messages[0] and "'adds_in_call'" in messages[0]


def test_layers_created_in_a_sublayers_build_during_the_first_call_are_fine():
    class LazyBlock(Layer):
        def build(self, input_shape):
            self.dense = Dense(2)

        def call(self, inputs):
            return self.dense(inputs)

    class Net(Model):
        def __init__(self):
            super().__init__()
            self.block = LazyBlock()

        def call(self, inputs):
            return self.block(inputs)

    net = Net()
    run_silently(lambda: net(np.ones((1, 3))))
    assert len(net.weights) == 2


# ------------------------------------------------- 3. containers tracking cannot see


def test_layers_in_a_set_are_flagged_on_the_first_call_with_their_path():
    class SetOfLayers(Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.blocks = {Dense(2, name="in_a_set")}

        def call(self, inputs):
            return inputs

    layer = SetOfLayers(name="set_owner")
    with pytest.warns(TrackingWarning, match=r"'in_a_set'.*'set_owner\.blocks\{\.\.\.\}'.*set"):
        layer(np.ones((1, 3)))
    assert tracking_warnings(lambda: layer(np.ones((1, 3)))) == []


def test_layers_in_a_custom_object_are_flagged_with_their_path():
    class ObjectOfLayers(Model):
        def __init__(self):
            super().__init__(name="object_owner")
            self.parts = [Box(Dense(2, name="boxed_dense"))]

        def call(self, inputs):
            return inputs

    with pytest.warns(TrackingWarning, match=r"'boxed_dense'.*'object_owner\.parts\[0\]\.value'"):
        ObjectOfLayers()(np.ones((1, 3)))


def test_an_optimizer_held_in_an_attribute_is_not_flagged():
    # A GAN keeps `d_optimizer` and `g_optimizer`: their Variables are their own state.
    class TwoOptimizers(Model):
        def __init__(self):
            super().__init__()
            self.dense = Dense(2)
            self.d_optimizer = minikeras.optimizers.Adam(learning_rate=0.01)
            self.optimizers = [minikeras.optimizers.SGD(momentum=0.9)]

        def call(self, inputs):
            return self.dense(inputs)

    model = TwoOptimizers()  # (each optimizer already holds `iterations`, `learning_rate`)
    run_silently(lambda: model(np.ones((1, 3))))
    assert len(model.weights) == 2


# --------------------------------------------------- 4. arrays where a weight was meant


def test_a_float_array_stored_by_build_is_flagged():
    class ArrayKernel(Layer):
        def build(self, input_shape):
            self.kernel = np.random.default_rng(0).standard_normal((input_shape[-1], 2))

        def call(self, inputs):
            return inputs @ self.kernel

    with pytest.warns(TrackingWarning, match=r"'array_kernel\.kernel'.*add_weight.*add_constant"):
        ArrayKernel(name="array_kernel")(np.ones((1, 3)))


def test_a_float_tensor_stored_by_build_is_flagged():
    class TensorKernel(Layer):
        def build(self, input_shape):
            self.kernel = ops.convert_to_tensor(
                np.random.default_rng(0).standard_normal((input_shape[-1], 2)), "float32"
            )

        def call(self, inputs):
            return inputs @ self.kernel

    with pytest.warns(TrackingWarning, match="'tensor_kernel.kernel'"):
        TensorKernel(name="tensor_kernel")(np.ones((1, 3)))


def test_real_constants_stored_by_build_are_not_flagged():
    class Constants(Layer):
        def build(self, input_shape):
            self.half = np.full((input_shape[-1],), 0.5)
            self.index = np.arange(input_shape[-1])
            self.table = np.array(0.25)
            self.add_constant("mixing", np.random.default_rng(0).standard_normal(input_shape[-1]))

        def call(self, inputs):
            return ops.take(inputs, self.index, axis=-1) * self.half * self.mixing + self.table

    layer = Constants()
    run_silently(lambda: layer(np.ones((1, 3))))
    assert layer.weights == []


def test_a_mask_of_zeros_and_ones_stored_by_build_and_a_merge_made_in_call_are_fine():
    # keras-io's PixelCNN keeps a 0/1 kernel mask from build() and writes
    # `layers.add([inputs, x])` in call(): neither loses a weight.
    class MaskedResidual(Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = Dense(3)

        def build(self, input_shape):
            self.dense.build(input_shape)
            self.mask = np.tril(np.ones((input_shape[-1], 3)))

        def call(self, inputs):
            self.dense.kernel.assign(self.dense.kernel * self.mask)
            return minikeras.layers.add([inputs, self.dense(inputs)])

    layer = MaskedResidual()
    out = run_silently(lambda: layer(np.ones((1, 3), "float32")))
    kernel = layer.dense.kernel.numpy()
    np.testing.assert_array_equal(kernel[np.triu_indices(3, 1)], 0.0)
    np.testing.assert_allclose(out.numpy()[0], 1.0 + kernel.sum(axis=0) + layer.dense.bias.numpy())
    assert len(layer.weights) == 2


# ------------------------------------------------------------- 5. tracking_report


class FeedForward(Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense_list = [Dense(4, name="ff_in"), Dense(3, name="ff_out")]

    def call(self, inputs):
        for dense in self.dense_list:
            inputs = dense(inputs)
        return inputs


class Transformerish(Model):
    def __init__(self):
        super().__init__(name="transformerish")
        self.ff1 = FeedForward(name="ff1")
        self.ff2 = FeedForward(name="ff2")
        self.norm_scale = self.add_weight("norm_scale", shape=(3,), trainable=False)

    def call(self, inputs):
        return self.ff2(self.ff1(inputs)) * self.norm_scale


def test_tracking_report_has_one_row_per_weight_with_path_owner_shape_dtype_trainable():
    model = Transformerish()
    model(np.ones((2, 3)))
    rows = model.tracking_report().rows
    assert len(rows) == len(model.weights) == 9
    assert rows[0] == ("norm_scale", "transformerish", (3,), "float32", False)
    assert rows[1] == ("ff1/dense_list[0]/kernel", "ff_in", (3, 4), "float32", True)
    assert rows[2] == ("ff1/dense_list[0]/bias", "ff_in", (4,), "float32", True)
    assert rows[3].path == "ff1/dense_list[1]/kernel" and rows[3].shape == (4, 3)
    assert [row.path for row in rows[5:]] == [
        "ff2/dense_list[0]/kernel",
        "ff2/dense_list[0]/bias",
        "ff2/dense_list[1]/kernel",
        "ff2/dense_list[1]/bias",
    ]
    assert model.tracking_report().untracked == []


def test_tracking_report_prints_and_lists_untracked_variables(capsys):
    class Leaky(Model):
        def __init__(self):
            super().__init__(name="leaky")
            self.dense = Dense(3, name="inner")

        def call(self, inputs):
            return self.dense(inputs) * GLOBAL_SCALE

    model = Leaky()
    with pytest.warns(TrackingWarning):
        model(np.ones((1, 3)))
    report = model.tracking_report(print_report=True)
    assert report.untracked == [("global_scale", (3,), "leaky")]
    printed = capsys.readouterr().out
    assert printed.strip() == str(report).strip()
    lines = printed.splitlines()
    assert lines[0].split() == ["path", "layer", "shape", "dtype", "trainable"]
    assert lines[1].split() == ["dense/kernel", "inner", "(3,", "3)", "float32", "True"]
    assert "global_scale" in printed and "'leaky'" in printed
    model.scale = GLOBAL_SCALE  # the fix: now tracked, so no longer listed
    assert model.tracking_report().untracked == []
    assert model.tracking_report().rows[0].path == "scale"  # created first, at import


# --------------------------------------------------------------- classic mistakes


def test_mistake_variable_created_outside_add_weight_in_init_is_tracked():
    class Raw(Layer):
        def __init__(self):
            super().__init__()
            self.w = Variable(np.ones(3, dtype="float32"), name="raw")

        def call(self, inputs):
            return inputs * self.w

    layer = Raw()
    run_silently(lambda: layer(np.ones((1, 3))))
    assert names(layer) == ["raw"]


def test_mistake_dense_created_in_build_and_assigned_to_self_is_tracked():
    class BuildsDense(Model):
        def build(self, input_shape):
            self.head = Dense(2)

        def call(self, inputs):
            return self.head(inputs)

    model = BuildsDense()
    run_silently(lambda: model(np.ones((1, 3))))
    assert model.weights == [model.head.kernel, model.head.bias]


def test_mistake_list_and_tuple_of_layers_are_tracked():
    class Stacks(Model):
        def __init__(self):
            super().__init__()
            self.as_list = [Dense(3), Dense(3)]
            self.as_tuple = (Dense(3), Dense(3))

        def call(self, inputs):
            for layer in [*self.as_list, *self.as_tuple]:
                inputs = layer(inputs)
            return inputs

    model = Stacks()
    run_silently(lambda: model(np.ones((1, 3))))
    assert len(model.layers) == 4 and len(model.weights) == 8


def test_mistake_nested_models_weights_are_the_subset():
    model = Transformerish()
    run_silently(lambda: model(np.ones((2, 3))))
    ff1_ids = {id(w) for w in model.ff1.weights}
    ff2_ids = {id(w) for w in model.ff2.weights}
    assert len(model.ff1.weights) == 4 and len(ff1_ids | ff2_ids) == 8
    assert model.ff1.weights == [w for w in model.weights if id(w) in ff1_ids]
    assert ff1_ids | ff2_ids < {id(w) for w in model.weights}


# ------------------------------------------------------- warnings point at user code


def test_every_kind_of_warning_points_at_the_users_code():
    class ArrayInBuild(Layer):
        def build(self, input_shape):
            self.kernel = np.random.default_rng(0).standard_normal((3, 3))

        def call(self, inputs):
            return inputs @ self.kernel

    class PlainLayerInCall(Layer):
        def call(self, inputs):
            return Layer()(inputs)

    class InSet(Layer):
        def __init__(self):
            super().__init__()
            self.blocks = {Dense(2)}

    for make in [UsesGlobal, ArrayInBuild, PlainLayerInCall, InSet]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            make()(np.ones((1, 3)))
        assert [w.filename for w in caught] == [__file__], make.__name__


# ----------------------------------------------------------- well-formed: silence


def test_well_formed_models_emit_no_warning():
    def build_and_run():
        model = Transformerish()
        model(np.ones((2, 3)))
        model(np.ones((5, 3)), training=True)
        sequential = Sequential([Dense(4, activation="relu"), Dense(2)])
        sequential(np.ones((2, 3)))
        inputs = minikeras.Input(shape=(3,))
        functional = Model(inputs, Dense(2)(Dense(4)(inputs)))
        functional(np.ones((2, 3)))
        model.tracking_report()
        model.summary(print_fn=lambda line: None)

    run_silently(build_and_run)


def test_a_variable_subclass_held_in_an_attribute_is_tracked_and_trained():
    class Scale(Variable):
        pass

    class Scaled(Model):
        def __init__(self):
            super().__init__()
            self.scale = Scale(np.ones(1, np.float32), name="scale")

        def call(self, x):
            return x * self.scale

    model = Scaled()
    model.compile(minikeras.optimizers.SGD(0.1), "mse")
    x = np.ones((4, 1), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrackingWarning)
        model.fit(x, 3 * x, epochs=1, verbose=0)
    assert [w.name for w in model.weights] == ["scale"]
    # One SGD step on mean((3 - s)^2) from s = 1: s + 0.1 * 2 * (3 - 1).
    np.testing.assert_allclose(model.scale.numpy(), [1.4], rtol=1e-6)


def test_the_scan_looks_into_an_object_whose_class_has_no_module_name():
    class Config:
        pass

    Config.__module__ = None  # (made by type() or exec without one)

    class Holder(Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.cfg = Config()
            self.cfg.scale = Variable(np.ones(2, dtype="float32"), name="cfg_scale")

        def call(self, inputs):
            return inputs * self.cfg.scale

    messages = tracking_warnings(lambda: Holder(name="cfg_holder")(np.ones((1, 2))))
    assert any("'cfg_scale'" in m for m in messages)

"""The `Layer` contract: `__call__` builds once then calls, weights, freezing, config.

Each test states one behaviour of `minikeras.Layer` and checks it against a
hand-made reference.
"""

import json
import warnings

import numpy as np
import pytest

import minikeras
import minikeras as mk
from minikeras import GradientTape, Layer, Tensor, Variable, initializers, ops
from minikeras.initializers import RandomNormal
from minikeras.layers import Activation, Dense, Dropout, Flatten, Reshape
from minikeras.utils import set_random_seed


class CountingBuild(Layer):
    """Scales its inputs by a weight; counts the calls to build()."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.build_calls = []

    def build(self, input_shape):
        self.build_calls.append(input_shape)
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones")

    def call(self, inputs):
        return inputs * self.scale


# ---------------------------------------------------------------- constructor


def test_default_names_are_the_snake_case_class_name_numbered():
    class HTTPResponseScaler(Layer):
        pass

    first, second = HTTPResponseScaler(), HTTPResponseScaler()
    assert (first.name, second.name) == ("http_response_scaler", "http_response_scaler_1")
    assert Layer(name="chosen").name == "chosen"


def test_constructor_arguments():
    layer = Layer(trainable=False, dtype=np.float64)
    assert not layer.trainable and layer.dtype == "float64"
    assert Layer().trainable and Layer().dtype == "float32"
    # A ValueError, as Keras 3 raises it for every layer.
    with pytest.raises(
        ValueError, match=r"Unrecognized keyword arguments passed to Layer: \{'units': 3\}"
    ):
        Layer(units=3)


# ---------------------------------------------------------------- __call__ and build


def test_call_converts_array_likes_to_tensors():
    seen = []

    class Recorder(Layer):
        def call(self, inputs):
            seen.append(inputs)
            return inputs

    layer = Recorder()
    layer([[1.0, 2.0]])
    layer(np.array([[1.0, 2.0]]))
    layer(3.0)
    layer([np.ones(2), np.zeros(2)])
    assert all(isinstance(x, Tensor) for x in seen[:3])
    assert isinstance(seen[3], list) and all(isinstance(x, Tensor) for x in seen[3])
    assert seen[0].shape == (1, 2) and seen[2].shape == ()


def test_build_is_called_once_by_the_first_call_with_the_input_shape():
    layer = CountingBuild()
    assert not layer.built and layer.build_calls == []
    for _ in range(3):
        layer(np.ones((4, 3)))
    assert layer.built
    assert layer.build_calls == [(4, 3)]
    assert len(layer.weights) == 1


def test_build_is_not_called_again_once_built_by_hand():
    layer = CountingBuild()
    layer.build((None, 3))
    assert layer.built and len(layer.build_calls) == 1
    layer(np.ones((2, 3)))
    assert len(layer.build_calls) == 1


def test_subclass_build_may_call_super_build():
    class WithSuper(Layer):
        def build(self, input_shape):
            self.bias = self.add_weight(shape=(input_shape[-1],), initializer="zeros")
            super().build(input_shape)

        def call(self, inputs):
            return inputs + self.bias

    layer = WithSuper()
    np.testing.assert_allclose(layer(np.ones((2, 3))).numpy(), np.ones((2, 3)))
    assert layer.built and len(layer.weights) == 1


def test_default_build_just_marks_built():
    layer = Layer()
    assert not layer.built
    layer.build((None, 3))
    assert layer.built and layer.weights == []
    other = Layer()
    np.testing.assert_array_equal(other(np.arange(3.0)).numpy(), np.arange(3.0))
    assert other.built


def test_call_with_incompatible_last_axis_names_layer_expected_size_and_shape():
    layer = CountingBuild(name="scaler")
    layer(np.ones((2, 3)))
    layer(np.ones((5, 3)))  # another batch size is fine
    with pytest.raises(ValueError, match=r"'scaler'.*3.*\(2, 4\)"):
        layer(np.ones((2, 4)))
    dense = Dense(2, name="dense_in_784")
    dense(np.ones((32, 784)))
    with pytest.raises(ValueError) as caught:
        dense(np.ones((32, 28, 28)))
    message = str(caught.value)
    assert "dense_in_784" in message and "784" in message and "(32, 28, 28)" in message


def test_a_layer_whose_weights_do_not_depend_on_the_last_axis_accepts_any():
    class Temperature(Layer):
        def build(self, input_shape):
            self.temperature = self.add_weight(shape=(), initializer="ones")

        def call(self, inputs):
            return inputs / self.temperature

    layer = Temperature()
    assert layer(np.ones((2, 3))).shape == (2, 3)
    assert layer(np.ones((2, 5))).shape == (2, 5)


# ------------------------------------------------------------------------ add_weight


def test_add_weight_keras3_form():
    layer = Layer()
    weight = layer.add_weight(shape=(5, 3), initializer=RandomNormal(), trainable=True)
    assert isinstance(weight, Variable)
    assert weight.shape == (5, 3) and weight.dtype == np.float32 and weight.trainable
    assert layer.weights == [weight]


def test_add_weight_tf2_form():
    layer = Layer()
    kernel = layer.add_weight("kernel", shape=[5, 3], dtype="float32", initializer="ones")
    assert kernel.name == "kernel" and kernel.shape == (5, 3) and kernel.dtype == np.float32
    np.testing.assert_array_equal(kernel.numpy(), np.ones((5, 3)))
    frozen = layer.add_weight("moving_mean", (3,), "float32", "zeros", None, False)
    assert not frozen.trainable
    assert layer.trainable_weights == [kernel] and layer.non_trainable_weights == [frozen]


def test_add_weight_positional_arguments_follow_keras3_and_tf2():
    layer = Layer()
    keras3 = layer.add_weight((2,), "ones", "float64", False, True, "l2")
    tf2 = layer.add_weight("tf2", (2,), "float64", "ones", "l2", False)
    for weight in (keras3, tf2):
        assert weight.shape == (2,) and weight.dtype == np.float64 and not weight.trainable
        # Resolved by regularizers.get, as Keras 3's add_weight does.
        assert isinstance(weight.regularizer, minikeras.regularizers.L2)
    with pytest.raises(TypeError, match="twice"):
        layer.add_weight((2,), shape=(3,))


def test_add_variable_is_an_alias_of_add_weight():
    layer = Layer()
    weight = layer.add_variable("w", shape=(2,), initializer="zeros")
    assert layer.weights == [weight] and weight.shape == (2,)


def test_add_weight_rejects_unknown_arguments():
    with pytest.raises(TypeError, match="initialiser"):
        Layer().add_weight(shape=(2,), initialiser="zeros")


def test_add_weight_default_initializer_is_glorot_uniform():
    set_random_seed(7)
    weight = Layer().add_weight(shape=(4, 6))
    set_random_seed(7)
    expected = initializers.GlorotUniform()((4, 6))
    np.testing.assert_array_equal(weight.numpy(), np.asarray(expected))
    limit = np.sqrt(6 / (4 + 6))
    assert np.abs(weight.numpy()).max() <= limit


def test_weights_may_be_created_in_init_when_the_shape_is_known():
    class Bias(Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.bias = self.add_weight(shape=(units,), initializer="ones")

        def call(self, inputs):
            return inputs + self.bias

    layer = Bias(3)
    assert layer.weights == [layer.bias]
    np.testing.assert_allclose(layer(np.zeros((2, 3))).numpy(), np.ones((2, 3)))
    assert layer.weights == [layer.bias]


def test_assigning_before_super_init_is_kept_and_a_missing_super_init_says_what_to_do():
    class Early(Layer):  # as Keras's RNN guide writes a cell: attributes, then the base
        def __init__(self):
            self.units = 3
            self.inner = Dense(2)
            super().__init__()

        def call(self, inputs):
            return self.inner(inputs)

    early = Early()
    assert early.units == 3 and early(np.ones((1, 4))).shape == (1, 2)
    assert len(early.weights) == 2  # the layer set before the base's __init__ is tracked

    class Never(Layer):
        def __init__(self):
            self.units = 3

        def call(self, inputs):
            return inputs

    with pytest.raises(RuntimeError, match=r"must call super\(\).__init__\(\)"):
        Never()(np.ones((1, 2)))


def test_hasattr_and_getattr_with_a_default_work_before_super_init_as_in_keras():
    class Asks(Layer):
        def __init__(self):
            self.seen = (hasattr(self, "units"), getattr(self, "units", 4))
            super().__init__()

    assert Asks().seen == (False, 4)


# ------------------------------------------------------------ weights and counting


class TwoWeights(Layer):
    """Creates `second` before `first`, and assigns them in the other order."""

    def build(self, input_shape):
        second = self.add_weight("second", shape=(2,))
        self.first = self.add_weight("first", shape=(3,), trainable=False)
        self.second = second

    def call(self, inputs):
        return inputs


def test_weights_are_listed_in_creation_order():
    layer = TwoWeights()
    layer(np.ones((1, 1)))
    assert [w.name for w in layer.weights] == ["second", "first"]
    assert [w.name for w in layer.variables] == ["second", "first"]
    assert [w.name for w in layer.trainable_weights] == ["second"]
    assert [w.name for w in layer.non_trainable_weights] == ["first"]


def test_weights_of_nested_layers_in_attribute_order_not_call_order():
    # Keras 3 lists sub-layers' weights in the order the attributes were set.
    class Block(Layer):
        def __init__(self):
            super().__init__()
            self.late = Dense(2)
            self.early = Dense(2)

        def call(self, inputs):
            return self.late(self.early(inputs))

    block = Block()
    block(np.ones((1, 3)))
    expected = [block.late.kernel, block.late.bias, block.early.kernel, block.early.bias]
    assert [id(w) for w in block.weights] == [id(w) for w in expected]


def test_a_weight_shared_by_two_layers_is_counted_once():
    class Tied(Layer):
        def __init__(self, weight):
            super().__init__()
            self.weight = weight

        def call(self, inputs):
            return inputs * self.weight

    shared = Variable(np.ones(3, dtype="float32"), name="shared")

    class Pair(Layer):
        def __init__(self):
            super().__init__()
            self.left, self.right = Tied(shared), Tied(shared)

        def call(self, inputs):
            return self.right(self.left(inputs))

    pair = Pair()
    pair(np.ones((2, 3)))
    assert pair.weights == [shared]
    assert pair.count_params() == 3


def test_count_params():
    dense = Dense(4)
    dense(np.ones((2, 3)))
    assert dense.count_params() == 3 * 4 + 4
    unbiased = Dense(4, use_bias=False)
    unbiased.build((None, 3))
    assert unbiased.count_params() == 12


def test_count_params_of_an_unbuilt_layer_says_how_to_build_it():
    with pytest.raises(ValueError, match="not built.*build"):
        Dense(4, name="lonely").count_params()


# ------------------------------------------------------------------------ trainable


class Outer(Layer):
    def __init__(self):
        super().__init__()
        self.inner = Dense(2)
        self.blocks = [Dense(2), TwoWeights()]

    def call(self, inputs):
        return self.blocks[1](self.blocks[0](self.inner(inputs)))


def test_trainable_false_freezes_the_layer_and_every_layer_below():
    outer = Outer()
    outer(np.ones((1, 3)))
    assert len(outer.trainable_weights) == 5 and len(outer.non_trainable_weights) == 1
    outer.trainable = False
    assert not outer.trainable and not outer.inner.trainable and not outer.blocks[0].trainable
    assert outer.trainable_weights == [] and len(outer.non_trainable_weights) == 6


def test_unfreezing_restores_only_the_weights_that_were_trainable():
    outer = Outer()
    outer(np.ones((1, 3)))
    before = [w.trainable for w in outer.weights]
    outer.trainable = False
    outer.trainable = False  # twice is the same as once
    outer.trainable = True
    assert [w.trainable for w in outer.weights] == before
    assert [w.name for w in outer.non_trainable_weights] == ["first"]


def test_unfreezing_a_sublayer_leaves_the_rest_frozen():
    outer = Outer()
    outer(np.ones((1, 3)))
    outer.trainable = False
    outer.inner.trainable = True
    assert outer.trainable_weights == [outer.inner.kernel, outer.inner.bias]


def test_weights_created_by_a_frozen_layer_are_frozen_then_unfrozen():
    dense = Dense(2, trainable=False)
    dense(np.ones((1, 3)))
    assert dense.trainable_weights == [] and len(dense.non_trainable_weights) == 2
    dense.trainable = True
    assert len(dense.trainable_weights) == 2


def test_freezing_a_model_before_it_is_built_freezes_the_weights_it_builds():
    outer = Outer()
    outer.trainable = False
    outer(np.ones((1, 3)))
    assert outer.trainable_weights == [] and len(outer.non_trainable_weights) == 6
    outer.trainable = True
    assert len(outer.trainable_weights) == 5


def test_frozen_weights_get_no_gradient():
    dense = Dense(2)
    dense(np.ones((1, 3)))
    dense.trainable = False
    with GradientTape() as tape:
        loss = ops.sum(dense(np.ones((1, 3))))
    assert tape.gradient(loss, dense.kernel) is None


# ---------------------------------------------------------- get_weights, set_weights


def test_get_weights_and_set_weights_round_trip():
    dense = Dense(2)
    dense(np.ones((1, 3)))
    values = [np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0])]
    dense.set_weights(values)
    got = dense.get_weights()
    assert [a.dtype for a in got] == [np.float32, np.float32]
    for array, value in zip(got, values):
        np.testing.assert_array_equal(array, value)
    got[0][0, 0] = 100.0  # copies: changing them leaves the layer alone
    assert dense.kernel.numpy()[0, 0] == 0.0


def test_set_weights_with_the_wrong_count_names_the_layer_and_assigns_nothing():
    dense = Dense(2, name="counted")
    dense(np.ones((1, 3)))
    before = dense.get_weights()
    with pytest.raises(ValueError, match=r"'counted'.*expected 2 arrays.*got 1"):
        dense.set_weights([np.zeros((3, 2))])
    for array, value in zip(dense.get_weights(), before):
        np.testing.assert_array_equal(array, value)


def test_set_weights_with_a_wrong_shape_names_it_and_assigns_nothing():
    dense = Dense(2, name="shaped")
    dense(np.ones((1, 3)))
    before = dense.get_weights()
    # The first array is fine, the second is not: neither may be assigned.
    with pytest.raises(ValueError, match=r"'shaped'.*bias: expected shape \(2,\), got \(3,\)"):
        dense.set_weights([np.zeros((3, 2)), np.zeros(3)])
    for array, value in zip(dense.get_weights(), before):
        np.testing.assert_array_equal(array, value)


def test_set_weights_with_values_that_are_not_numbers_assigns_nothing():
    dense = Dense(2)
    dense(np.ones((1, 3)))
    before = dense.get_weights()
    with pytest.raises(ValueError):
        dense.set_weights([np.zeros((3, 2)), np.array(["a", "b"])])
    for array, value in zip(dense.get_weights(), before):
        np.testing.assert_array_equal(array, value)


# --------------------------------------------------------------------------- config

BUILT_IN_LAYERS = [
    lambda: Dense(
        3,
        activation="relu",
        use_bias=False,
        kernel_initializer=initializers.HeNormal(seed=1),
        name="d",
        trainable=False,
    ),
    lambda: Dense(2),
    lambda: Activation("tanh", name="act"),
    lambda: Flatten(name="flat"),
    lambda: Reshape((2, -1), name="reshape"),
    lambda: Dropout(0.25, noise_shape=(None, 1), seed=3, name="drop"),
    lambda: Layer(name="plain", dtype="float64"),
]


@pytest.mark.parametrize("make", BUILT_IN_LAYERS)
def test_get_config_from_config_round_trip(make):
    layer = make()
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert type(clone) is type(layer) and not clone.built
    assert clone.get_config() == config
    # The config survives JSON (tuples come back as lists).
    from_json = type(layer).from_config(json.loads(json.dumps(config)))
    assert from_json.get_config() == config


@pytest.mark.parametrize("make", BUILT_IN_LAYERS)
def test_a_layer_from_config_computes_like_the_original(make):
    layer = make()
    x = np.random.default_rng(0).standard_normal((2, 4)).astype("float32")
    layer(x)
    clone = type(layer).from_config(layer.get_config())
    clone(x)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(clone(x).numpy(), layer(x).numpy(), rtol=1e-6)


def test_config_of_a_base_layer():
    layer = Layer(name="base", trainable=False)
    assert layer.get_config() == {"name": "base", "trainable": False, "dtype": "float32"}


# -------------------------------------------------------------------------- float32


def test_float64_inputs_to_a_float32_layer_give_float32_outputs_and_gradients():
    dense = Dense(3, activation="tanh")
    x = np.random.default_rng(1).standard_normal((4, 2))  # float64
    with GradientTape() as tape:
        y = dense(x)
        loss = ops.sum(y * y)
    assert y.dtype == np.float32 and loss.dtype == np.float32
    gradients = tape.gradient(loss, dense.trainable_weights)
    assert [g.dtype for g in gradients] == [np.float32, np.float32]


def test_float64_arrays_nested_in_further_arguments_are_converted_too():
    # As Keras converts every array of a call's arguments: a cell's states come as a
    # list, and float64 ones made a float32 LSTMCell compute in float64.
    cell = mk.layers.LSTMCell(2)
    h, (_, c) = cell(np.ones((1, 3)), [np.ones((1, 2)), np.ones((1, 2))])
    assert h.dtype == c.dtype == np.float32
    seen = {}

    class Recorder(Layer):
        def call(self, inputs, pair, extra=None, flag=True):
            seen.update(pair=pair, extra=extra, flag=flag)
            return inputs

    Recorder()(np.ones(2), (np.ones(2), [np.arange(2)]), extra={"a": np.ones(1)}, flag=False)
    first, (second,) = seen["pair"]
    assert first.dtype == np.float32 and seen["extra"]["a"].dtype == np.float32
    assert second.dtype == np.int64 and seen["flag"] is False  # integers and flags as given


def test_a_float64_layer_keeps_float64():
    dense = Dense(2, dtype="float64")
    y = dense(np.ones((1, 3), dtype="float32"))
    assert dense.kernel.dtype == np.float64 and y.dtype == np.float64


def test_an_array_of_the_layers_dtype_is_taken_as_it_is():
    # __call__ wraps such an array without _convert_inputs: the same Tensor it made,
    # sharing the array; any other dtype still goes through the conversion.
    seen = []

    class Recorder(Layer):
        def call(self, inputs):
            seen.append(inputs)
            return inputs

    x32 = np.array([[1.0, 2.0]], dtype="float32")
    Recorder()(x32)
    Recorder(dtype="float64")(x32)
    Recorder(dtype="int32")(np.array([1, 2], dtype="int32"))
    assert type(seen[0]) is Tensor and seen[0]._value is x32
    assert seen[1].dtype == np.float64 and seen[1]._value is not x32
    assert type(seen[2]) is Tensor and seen[2].dtype == np.int32
    dense = Dense(2, kernel_initializer="ones")
    np.testing.assert_array_equal(dense(x32).numpy(), dense(Tensor(x32)).numpy())


def test_an_array_with_a_symbolic_argument_still_builds_a_graph():
    class Add(Layer):
        def call(self, inputs, other):
            return inputs + other

    other = mk.Input((2,))
    outputs = Add()(np.ones((1, 2), dtype="float32"), other=other)
    assert isinstance(outputs, mk.layers.SymbolicTensor)


def test_integer_inputs_are_not_cast():
    class Identity(Layer):
        def call(self, inputs):
            return inputs

    assert Identity()(np.arange(3)).dtype.kind == "i"


def test_a_well_formed_layer_emits_no_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layer = CountingBuild()
        layer(np.ones((2, 3)))
        layer(np.ones((2, 3)))
        Outer()(np.ones((2, 3)))
    assert [str(w.message) for w in caught] == []


def test_repr_names_the_class_the_layer_and_whether_it_is_built():
    assert repr(Dense(2, name="shown")) == "<Dense name='shown' built=False>"


def test_trackingwarning_is_a_userwarning():
    assert issubclass(minikeras.TrackingWarning, UserWarning)


# ------------------------------------------------------------ input dtypes (#18)


@pytest.mark.parametrize(
    "data, dtype",
    [
        (np.ones((1, 2), complex), "complex128"),
        (np.array([["a", "b"]]), "<U1"),
        (np.array([[1, None]], object), "object"),
    ],
)
def test_inputs_of_other_dtypes_are_refused_naming_the_layer_and_dtype(data, dtype):
    model = mk.Sequential([mk.Input((2,)), Dense(1)], name="picky")
    before = [w.copy() for w in model.get_weights()]
    with pytest.raises(TypeError, match=rf"Sequential 'picky' takes numbers or booleans.*{dtype}"):
        model(data)
    dense = Dense(1, name="direct")
    with pytest.raises(TypeError, match=rf"Dense 'direct'.*{dtype}"):
        dense(data)
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))


def test_numbers_and_booleans_are_accepted():
    model = mk.Sequential([mk.Input((2,)), Dense(1, kernel_initializer="ones")])
    for data in ([[1, 2]], np.array([[1, 2]], "int8"), np.array([[True, False]])):
        out = model(data).numpy()
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, np.asarray(data, "float32").sum(axis=1, keepdims=True))


def test_ragged_python_lists_are_a_clear_error():
    with pytest.raises(TypeError, match="Dense 'ragged' cannot take list inputs"):
        Dense(1, name="ragged")([[1.0, 2.0], [3.0]])


@pytest.mark.parametrize(
    "bad, message",
    [
        (
            np.ones((3, 2), complex),
            "expected numbers for a float32 weight, got an array of dtype complex128",
        ),
        (np.ones((3, 2), object), "dtype object"),
        (np.full((3, 2), "a"), "dtype <U1"),
        (np.full((3, 2), 1e300), "values up to 1e\\+300 do not fit its dtype float32"),
    ],
)
def test_set_weights_refuses_what_is_not_a_number_and_changes_nothing(bad, message):
    dense = Dense(2, name="target")
    dense.build((None, 3))
    before = dense.get_weights()
    with pytest.raises(ValueError, match=rf"Dense 'target'\.set_weights: kernel: .*{message}"):
        dense.set_weights([bad, np.ones(2)])  # the bias alone is fine: nothing is assigned
    for old, new in zip(before, dense.get_weights()):
        np.testing.assert_array_equal(old, new)


def test_a_variable_passed_as_an_argument_is_not_taken_for_a_hidden_weight():
    # Keras makes a tensor of a Variable argument; here it is read at the call's
    # boundary, so the untracked-weight check (which fires for a Variable the call
    # reaches by other ways) stays quiet, and gradients still reach the Variable.
    class Scale(Layer):
        def call(self, inputs, factor):
            return inputs * factor

    factor = mk.Variable(np.float32(2.0), name="factor")
    with warnings.catch_warnings():
        warnings.simplefilter("error", mk.TrackingWarning)
        with GradientTape() as tape:
            total = ops.sum(Scale()(np.ones((2, 2), "float32"), factor))
    assert float(total) == 8.0 and float(tape.gradient(total, factor)) == 4.0

    class Hidden(Layer):
        def call(self, inputs):
            return inputs * factor  # reached through a closure: not tracked

    with pytest.warns(mk.TrackingWarning, match="'factor'"):
        Hidden()(np.ones((2, 2), "float32"))

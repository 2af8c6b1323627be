"""EinsumDense: values against numpy's einsum, gradients against central differences, shapes
with None, the three equation forms, fans, configs, saving and errors."""

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras as mk
from minikeras import Input, Model, layers

rng = np.random.default_rng(8)


# (equation, output_shape, bias_axes, input shape, kernel shape, bias shape, output shape)
CASES = [
    ("ab,bc->ac", 4, "c", (2, 3), (3, 4), (4,), (2, 4)),
    ("abc,cd->abd", (None, 5), "d", (2, 3, 4), (4, 5), (5,), (2, 3, 5)),
    ("abc,cde->abde", (None, 2, 3), "de", (2, 4, 5), (5, 2, 3), (2, 3), (2, 4, 2, 3)),
    ("abc,cde->abde", (4, 2, 3), "d", (2, 4, 5), (5, 2, 3), (2, 1), (2, 4, 2, 3)),
    ("abcd,cde->abe", (3, 6), None, (2, 3, 4, 5), (4, 5, 6), None, (2, 3, 6)),
    ("...b,bc->...c", 4, "c", (2, 3, 5, 6), (6, 4), (4,), (2, 3, 5, 4)),
    ("...b,bc->...c", 4, None, (7, 6), (6, 4), None, (7, 4)),
    ("ab...,bc->ac...", 4, "c", (2, 3, 5, 6), (3, 4), (4, 1, 1), (2, 4, 5, 6)),
]
IDS = [f"{c[0]}-{c[2]}" for c in CASES]


@pytest.mark.parametrize(
    "equation, output_shape, bias_axes, x_shape, k_shape, b_shape, y_shape", CASES, ids=IDS
)
def test_matches_numpy_einsum(
    equation, output_shape, bias_axes, x_shape, k_shape, b_shape, y_shape
):
    layer = layers.EinsumDense(
        equation, output_shape, bias_axes=bias_axes, bias_initializer="random_normal"
    )
    x = rng.standard_normal(x_shape).astype("float32")
    y = layer(x)
    assert layer.kernel.shape == k_shape
    assert (layer.bias is None and b_shape is None) or layer.bias.shape == b_shape
    expected = np.einsum(equation, x.astype(np.float64), layer.kernel.numpy().astype(np.float64))
    if layer.bias is not None:
        expected = expected + layer.bias.numpy()
    assert y.shape == y_shape and y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-5)
    # Symbolic shapes: an unknown batch (and unknown steps where the kernel does not use them).
    unknown = (None, *x_shape[1:])
    assert layer.compute_output_shape(unknown) == (None, *y_shape[1:])


def test_by_hand_a_dense_with_activation():
    layer = layers.EinsumDense(
        "ab,bc->ac",
        2,
        activation="relu",
        bias_axes="c",
        kernel_initializer=mk.initializers.Constant(1.0),
        bias_initializer=mk.initializers.Constant(-4.0),
    )
    # row sums 3 and 6, minus 4, through relu
    out = layer(np.array([[1.0, 2.0], [2.0, 4.0]])).numpy()
    np.testing.assert_array_equal(out, [[0.0, 0.0], [2.0, 2.0]])


def test_gradients_match_finite_differences():
    layer = layers.EinsumDense(
        "abc,cde->abde",
        (None, 2, 3),
        bias_axes="e",
        activation="tanh",
        bias_initializer="random_normal",
        dtype="float64",
    )
    x = rng.standard_normal((2, 3, 4))
    layer(x)
    grads = assert_gradients_match(
        lambda t: projection_loss(layer(t)), [x], [layer.kernel, layer.bias]
    )
    assert [g.shape for g in grads] == [(2, 3, 4), (4, 2, 3), (3,)]


def test_glorot_fans_come_from_the_axes_in_and_out():
    layer = layers.EinsumDense("abc,cde->abde", (None, 8, 50))
    layer.build((None, 5, 100))
    # fan_in = 100 (c), fan_out = 8 * 50 (d, e): glorot uniform's std sqrt(2 / 500)
    assert abs(layer.kernel.numpy().std() - np.sqrt(2 / 500)) < 0.003


def test_symbolic_model_config_and_saving(tmp_path):
    inputs = Input((None, 6))
    layer = layers.EinsumDense("abc,cd->abd", (None, 3), bias_axes="d", name="proj")
    outputs = layer(inputs)
    assert outputs.shape == (None, None, 3)
    model = Model(inputs, outputs)
    config = layer.get_config()
    clone = layers.EinsumDense.from_config(config)
    assert clone.get_config() == config
    x = rng.standard_normal((2, 4, 6)).astype("float32")
    path = tmp_path / "einsum.keras"
    model.save(path)
    loaded = mk.saving.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_it_trains_in_fit():
    model = mk.Sequential([Input((3,)), layers.EinsumDense("ab,bc->ac", 1, bias_axes="c")])
    model.compile(optimizer=mk.optimizers.SGD(0.1), loss="mse")
    x = rng.standard_normal((64, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32") + 0.3
    model.fit(x, y, epochs=150, batch_size=64, verbose=0)
    np.testing.assert_allclose(model.layers[0].kernel.numpy().ravel(), [1.0, -2.0, 0.5], atol=0.02)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"equation": "ab,bc", "output_shape": 3}, "`equation` must be of the form"),
        ({"equation": "...ab,bc->ac", "output_shape": 3}, "`equation` must be of the form"),
        ({"equation": "ab,bc->ac", "output_shape": "3"}, "`output_shape` must be an int"),
        ({"equation": "ab,bc->ac", "output_shape": 3, "bias_axes": "x"},
         "`bias_axes` must be letters of the output 'ac'"),
    ],
)  # fmt: skip
def test_constructor_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        layers.EinsumDense(**kwargs)


@pytest.mark.parametrize(
    "equation, output_shape, input_shape, message",
    [
        ("ab,bc->ac", 3, (None, 2, 4), r"needs inputs with 2 axes, got shape \(None, 2, 4\)"),
        ("abc,cd->abd", (4, 3), (None, 5, 2), "output_shape gives axis 'b' size 4, but the inputs have 5"),  # noqa: E501
        ("ab,bc->ac", (3, 4), (None, 2), r"needs an output_shape of 1 sizes .* got \(3, 4\)"),
        ("ab,bx->ac", 3, (None, 2), "output axis 'c' is in neither inputs nor kernel"),
        ("ab,bcz->ac", 3, (None, 2), "kernel axis 'z' is in neither inputs nor outputs"),
        ("ab,bc->ac", None, (None, 2), "`output_shape` must be"),
        ("ab,bc->ac", (None,), (None, 2), "needs a known size for kernel axis 'c'"),
    ],
)  # fmt: skip
def test_shape_errors_name_the_layer(equation, output_shape, input_shape, message):
    with pytest.raises(ValueError, match=message):
        layers.EinsumDense(equation, output_shape, name="e").build(input_shape)

"""Keras's namespaces of ops: `ops.nn`, `ops.linalg` and `ops.numpy`.

Code written for Keras reaches ops through them (`keras.ops.linalg.qr(x)`,
`from keras.ops import nn`); each holds Keras's names of the namespace, every
one the very op at the top of `minikeras.ops`, so graph nodes and saved
names do not depend on the path a model was written with. The names are
checked against Keras's when Keras is importable, and against the lists kept
here (Keras 3.15) always.
"""

import json
import math
import zipfile

import numpy as np
import pytest

import minikeras as mk
from minikeras.models import load_model

# Keras 3.15's public names of keras.ops.nn, keras.ops.linalg and keras.ops.numpy.
KERAS_NAMES = {
    "nn": """
        adaptive_average_pool adaptive_max_pool average_pool batch_normalization
        binary_crossentropy categorical_crossentropy celu conv conv_transpose ctc_decode
        ctc_loss depth_to_space depthwise_conv dot_product_attention elu fold gelu glu
        hard_shrink hard_sigmoid hard_silu hard_swish hard_tanh layer_normalization leaky_relu
        log_sigmoid log_softmax max_pool moments multi_hot normalize one_hot polar psnr relu
        relu6 rms_normalization selu separable_conv sigmoid silu soft_shrink softmax softplus
        softsign space_to_depth sparse_categorical_crossentropy sparse_plus sparse_sigmoid
        sparsemax squareplus swish tanh_shrink threshold unfold
    """,
    "linalg": """
        cholesky cholesky_inverse det eig eigh inv jvp lstsq lu_factor matrix_rank norm pinv
        qr solve solve_triangular svd
    """,
    "numpy": """
        abs absolute add all allclose amax amin angle any append arange arccos arccosh
        arcsin arcsinh arctan arctan2 arctanh argmax argmin argpartition argsort array
        array_split average bartlett bincount bitwise_and bitwise_invert bitwise_left_shift
        bitwise_not bitwise_or bitwise_right_shift bitwise_xor blackman broadcast_to cbrt
        ceil clip concatenate conj conjugate copy corrcoef correlate cos cosh count_nonzero
        cross cumprod cumsum deg2rad diag diagflat diagonal diff digitize divide
        divide_no_nan dot dsplit dstack einsum empty empty_like equal exp exp2 expand_dims
        expm1 eye fabs flip fliplr flipud floor floor_divide fmax fmin fmod full full_like
        gcd geomspace get_item greater greater_equal hamming hanning heaviside histogram
        hsplit hstack hypot i0 identity imag inner isclose isfinite isin isinf isnan
        isneginf isposinf isreal kaiser kron lcm ldexp left_shift less less_equal linspace
        log log10 log1p log2 logaddexp logaddexp2 logical_and logical_not logical_or
        logical_xor logspace matmul max maximum mean median meshgrid min minimum mod
        moveaxis multiply nan_to_num nanargmax nanargmin nancumprod nancumsum nanmax nanmean
        nanmedian nanmin nanpercentile nanprod nanquantile nanstd nansum nanvar ndim
        negative nextafter nonzero not_equal ones ones_like outer pad percentile power prod
        ptp quantile rad2deg ravel real reciprocal repeat reshape right_shift roll rot90
        round searchsorted select sign signbit sin sinc sinh size slogdet sort split sqrt
        square squeeze stack std subtract sum swapaxes take take_along_axis tan tanh
        tensordot tile trace transpose trapezoid tri tril triu true_divide trunc unique
        unravel_index vander var vdot vectorize view vsplit vstack where zeros zeros_like
    """,
}
NAMESPACES = sorted(KERAS_NAMES)


def public_names(module):
    return sorted(name for name in dir(module) if not name.startswith("_"))


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_each_namespace_holds_kerass_names_each_the_op_itself(namespace):
    module = getattr(mk.ops, namespace)
    kept = sorted(KERAS_NAMES[namespace].split())
    assert public_names(module) == kept
    assert sorted(module.__all__) == kept
    others = [name for name in kept if getattr(module, name) is not getattr(mk.ops, name)]
    assert others == []


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_the_kept_names_are_kerass(namespace):
    keras = pytest.importorskip("keras")
    assert sorted(KERAS_NAMES[namespace].split()) == public_names(getattr(keras.ops, namespace))


def test_the_top_level_holds_every_name_of_kerass_ops():
    names = set(mk.ops.__all__)
    for namespace in NAMESPACES:
        assert set(KERAS_NAMES[namespace].split()) <= names, namespace
    # Keras's second names of three ops: the ops themselves, with one node class each.
    seconds = {"absolute": "abs", "conj": "conjugate", "get_item": "getitem"}
    for second, first in seconds.items():
        assert getattr(mk.ops, second) is getattr(mk.ops, first)
    classes = mk.layers.operation_node.OPERATION_CLASSES
    assert not set(seconds) & set(classes)
    assert len({cls.__name__ for cls in classes.values()}) == len(classes)
    keras = pytest.importorskip("keras")
    theirs = {name for name in dir(keras.ops) if not name.startswith("_")}
    assert theirs - names == {"image", *NAMESPACES}  # (Keras's namespaces: modules)


def test_kerass_second_names_record_the_first_names_nodes(tmp_path):
    x = mk.Input((3,), name="x")
    outputs = [mk.ops.absolute(x), mk.ops.conj(x), mk.ops.get_item(x, (slice(None), 1))]
    model = mk.Model(x, outputs)
    kinds = [type(op).__name__ for op in model.operations[1:]]
    assert kinds == ["Absolute", "Conjugate", "GetItem"]
    model.save(tmp_path / "m.keras")
    data = np.array([[-1.0, 2.0, -3.0]], "float32")
    got = load_model(tmp_path / "m.keras")(data)
    expected = [[[1.0, 2.0, 3.0]], data, [2.0]]
    for value, want in zip(got, expected):
        np.testing.assert_array_equal(value.numpy(), want)


def test_code_written_for_keras_runs():
    import minikeras as keras
    from minikeras.ops import linalg

    a = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], dtype="float32")
    q, r = keras.ops.linalg.qr(a)
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a, atol=1e-5)
    np.testing.assert_allclose(q.numpy().T @ q.numpy(), np.eye(3), atol=1e-5)
    np.testing.assert_allclose(linalg.det(a).numpy(), 18.0, rtol=1e-5)  # 2*11 - 1*4
    assert keras.ops.nn.relu6(np.array([-1.0, 3.0, 9.0], "float32")).numpy().tolist() == [
        0.0,
        3.0,
        6.0,
    ]
    assert keras.ops.numpy.arange(5).numpy().tolist() == [0, 1, 2, 3, 4]
    assert keras.ops.numpy.matmul(a, np.ones(3, "float32")).numpy().tolist() == [3.0, 5.0, 5.0]


def test_a_model_written_through_the_namespaces_is_the_same_graph_and_saves(tmp_path):
    inputs = mk.Input((3,))
    outputs = mk.ops.numpy.sum(mk.ops.nn.relu6(inputs * 4.0), axis=-1)
    model = mk.Model(inputs, outputs)
    direct = mk.Model(inputs, mk.ops.sum(mk.ops.relu6(inputs * 4.0), axis=-1))
    assert [type(layer).__name__ for layer in model.layers] == [
        type(layer).__name__ for layer in direct.layers
    ]
    x = np.array([[-1.0, 0.5, 2.0]], "float32")
    assert model(x).numpy().tolist() == [8.0]  # 0 + 2 + 6
    model.save(tmp_path / "m.minikeras")
    assert load_model(tmp_path / "m.minikeras")(x).numpy().tolist() == [8.0]


def _with_function(path, reference):
    # The file's Lambda names its function as `reference` does, as an older file would.
    with zipfile.ZipFile(path) as zipped:
        contents = {name: zipped.read(name) for name in zipped.namelist()}
    config = json.loads(contents["config.json"])
    config["model"]["config"]["layers"][1]["config"]["function"] = reference
    contents["config.json"] = json.dumps(config).encode()
    with zipfile.ZipFile(path, "w") as zipped:
        for name, data in contents.items():
            zipped.writestr(name, data)


@pytest.mark.parametrize(
    ("module", "name", "arguments"),
    [
        # Where these were before ops.nn and ops.linalg became Keras's namespaces.
        ("minikeras.ops.nn", "relu", {}),
        ("minikeras.ops.nn", "erf", {}),  # not in Keras's ops.nn
        ("minikeras.ops.linalg", "matmul", {"x2": [[2.0], [3.0]]}),  # not in Keras's ops.linalg
        ("minikeras.ops.linalg", "dot", {"x2": [[2.0], [3.0]]}),
        # Where they are now, and names of the namespaces.
        ("minikeras.ops.activation_functions", "relu", {}),
        ("minikeras.ops.matrix_products", "matmul", {"x2": [[2.0], [3.0]]}),
        ("minikeras.ops.nn", "relu6", {}),
        ("minikeras.ops", "relu", {}),
    ],
)
def test_a_file_naming_an_op_by_an_old_module_path_still_loads(tmp_path, module, name, arguments):
    # Saved with another function, which the file then names as `module.name`.
    saved = mk.ops.dot if name == "matmul" else mk.ops.matmul if arguments else mk.ops.negative
    model = mk.Sequential([mk.Input((2,)), mk.layers.Lambda(saved, arguments=arguments)])
    model.save(tmp_path / "m.minikeras")
    _with_function(tmp_path / "m.minikeras", {"module": module, "function_name": name})
    loaded = load_model(tmp_path / "m.minikeras")
    assert loaded.layers[0].function is getattr(mk.ops, name)
    x = np.array([[-1.0, 2.0]], "float32")
    expected = {
        "relu": [[0.0, 2.0]],
        "relu6": [[0.0, 2.0]],
        "erf": [[math.erf(-1.0), math.erf(2.0)]],
    }.get(name, [[4.0]])  # -1 * 2 + 2 * 3
    np.testing.assert_allclose(loaded(x).numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize(
    ("module", "name", "arguments"),
    [
        ("minikeras.ops.nn", "relu", {}),
        ("minikeras.ops.nn", "erf", {}),  # not in Keras's ops.nn
        ("minikeras.ops.linalg", "matmul", {"x2": [[2.0], [3.0]]}),  # not in Keras's linalg
        ("minikeras.ops.linalg", "dot", {"x2": [[2.0], [3.0]]}),
        ("minikeras.ops.activation_functions", "relu", {}),
        ("minikeras.ops", "relu", {}),
    ],
)
def test_a_config_in_memory_naming_an_op_by_an_old_module_path_finds_it(module, name, arguments):
    config = mk.layers.Lambda(mk.ops.negative, arguments=arguments).get_config()
    config["function"] = {"module": module, "function_name": name}
    assert mk.layers.Lambda.from_config(config).function is getattr(mk.ops, name)
    model = mk.Sequential([mk.Input((2,)), mk.layers.Lambda.from_config(config)])
    rebuilt = mk.Sequential.from_config(model.get_config())
    assert rebuilt.layers[0].function is getattr(mk.ops, name)
    x = np.array([[-1.0, 2.0]], "float32")
    expected = {"relu": [[0.0, 2.0]], "erf": [[math.erf(-1.0), math.erf(2.0)]]}
    np.testing.assert_allclose(rebuilt(x).numpy(), expected.get(name, [[4.0]]), rtol=1e-6)


def test_a_config_naming_an_unknown_function_is_refused_naming_it():
    config = mk.layers.Lambda(mk.ops.negative).get_config()
    config["function"] = {"module": "minikeras.ops.nn", "function_name": "no_such_op"}
    with pytest.raises(ValueError, match="cannot find the function .*no_such_op"):
        mk.layers.Lambda.from_config(config)

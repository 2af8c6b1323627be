"""`mk.backend` and `mk.config` as Keras 3 code uses them, by hand and against Keras 3."""

import logging
import threading

import numpy as np
import pytest

import minikeras as mk
from minikeras import backend, config


@pytest.fixture(autouse=True)
def _restore_settings():
    yield
    config.set_epsilon(1e-7)
    config.set_floatx("float32")
    config.enable_interactive_logging()
    config.enable_traceback_filtering()
    config.set_image_data_format("channels_last")


def test_backend_reexports_the_one_implementation_of_each_setting():
    for name in ("floatx", "set_floatx", "epsilon", "set_epsilon", "standardize_dtype"):
        assert getattr(backend, name) is getattr(config, name)
    assert backend.clear_session is mk.utils.clear_session
    assert backend.is_keras_tensor is mk.utils.is_keras_tensor
    assert backend.backend is config.backend


def test_set_epsilon_reaches_the_losses_and_is_checked():
    config.set_epsilon(0.25)
    assert backend.epsilon() == 0.25
    # kl_divergence clips y_true to [epsilon, 1]: 0.25 * log(0.25 / 0.5) for the 0 target
    value = mk.losses.kl_divergence([[1.0, 0.0]], [[0.5, 0.5]]).numpy()[0]
    assert value == pytest.approx(np.log(2.0) + 0.25 * np.log(0.5), rel=1e-6)
    for bad in (0, -1e-3, "small", True, float("nan")):
        with pytest.raises(ValueError, match="set_epsilon: expected a positive float"):
            config.set_epsilon(bad)
    assert config.epsilon() == 0.25


def test_set_floatx_through_backend_makes_new_weights_of_that_dtype():
    backend.set_floatx("float64")
    assert mk.layers.Dense(2)(np.ones((1, 3))).dtype == np.float64
    backend.set_floatx("float32")
    assert mk.layers.Dense(2)(np.ones((1, 3))).dtype == np.float32


def test_image_data_format_defaults_to_channels_last_and_can_be_set():
    assert backend.image_data_format() == config.image_data_format() == "channels_last"
    backend.set_image_data_format("channels_first")
    assert config.image_data_format() == "channels_first"
    config.set_image_data_format("Channels_Last")  # any case, as Keras
    assert backend.image_data_format() == "channels_last"


@pytest.mark.parametrize("value", ["NHWC", "channels-first", "", None, 1])
def test_set_image_data_format_refuses_other_values_and_keeps_the_setting(value):
    config.set_image_data_format("channels_first")
    with pytest.raises(ValueError, match=r"set_image_data_format: `data_format` must be "
                                         r"'channels_last' or 'channels_first', got"):  # fmt: skip
        config.set_image_data_format(value)
    assert config.image_data_format() == "channels_first"


def test_image_data_format_is_one_for_the_process_and_outlives_clear_session():
    config.set_image_data_format("channels_first")
    seen = []
    thread = threading.Thread(target=lambda: seen.append(config.image_data_format()))
    thread.start()
    thread.join()
    assert seen == ["channels_first"]
    mk.utils.clear_session()
    assert config.image_data_format() == "channels_first"


def test_standardize_data_format_reads_the_setting_for_none():
    assert config.standardize_data_format(None) == "channels_last"
    config.set_image_data_format("channels_first")
    assert config.standardize_data_format(None) == "channels_first"
    assert config.standardize_data_format("CHANNELS_LAST") == "channels_last"
    with pytest.raises(ValueError, match=r"Conv2D: `data_format` must be .*got 'NCHW'"):
        config.standardize_data_format("NCHW", "Conv2D")


def test_image_data_format_setting_matches_keras():
    keras = pytest.importorskip("keras")
    try:
        for value in ("channels_first", "CHANNELS_LAST", "Channels_First"):
            keras.config.set_image_data_format(value)
            config.set_image_data_format(value)
            assert config.image_data_format() == keras.config.image_data_format()
        for value in ("NHWC", None):
            with pytest.raises(ValueError):
                keras.config.set_image_data_format(value)
            with pytest.raises(ValueError):
                config.set_image_data_format(value)
        keras.utils.clear_session()
        assert keras.config.image_data_format() == "channels_first"  # clear_session keeps it
    finally:
        keras.config.set_image_data_format("channels_last")


def test_one_backend():
    assert config.backend() == backend.backend() == "numpy"
    config.set_backend("numpy")
    with pytest.raises(ValueError, match="minikeras has one backend"):
        config.set_backend("jax")


def test_dtype_predicates():
    floats = ["float16", "float32", "float64", np.float32, float]
    ints = ["int8", "int16", "int32", "int64", "uint8", "uint32", np.int64]
    for dtype in floats:
        assert backend.is_float_dtype(dtype) and not backend.is_int_dtype(dtype), dtype
    for dtype in ints:
        assert backend.is_int_dtype(dtype) and not backend.is_float_dtype(dtype), dtype
    assert not backend.is_int_dtype("bool") and not backend.is_float_dtype("bool")
    with pytest.raises(TypeError, match="is not a dtype"):
        backend.is_float_dtype("floaty")


@pytest.mark.parametrize(
    "dtypes, expected",
    [
        (("int32", "float16"), "float16"),
        (("int64", "float32"), "float32"),
        (("uint8", "int8"), "int16"),
        (("bool", "int8"), "int8"),
        (("float16", "float32"), "float32"),
        (("int8", "uint32"), "int64"),
        (("int32", float), "float32"),
        (("int8", int), "int8"),
        (("float16", float), "float16"),
        (("bool", int), "int64"),
        (("bool", bool), "bool"),
        (("bool", float), "float32"),
        ((int,), "int64"),
        ((), "float32"),
    ],
)
def test_result_type_is_what_the_ops_give(dtypes, expected):
    assert backend.result_type(*dtypes) == expected
    samples = {int: 3, float: 0.5, bool: True}
    operands = [samples[d] if d in samples else np.ones(2, d) for d in dtypes]
    if len(operands) == 2:  # the ops agree
        assert mk.ops.add(*operands).dtype == expected


def test_get_uid_shares_the_layer_name_counter_and_clear_session_resets_it():
    backend.clear_session()
    assert backend.get_uid("dense") == 1
    assert mk.layers.Dense(2).name == "dense_1"
    assert backend.get_uid("dense") == 3
    assert backend.get_uid() == 1 and backend.get_uid() == 2
    backend.clear_session()
    assert mk.layers.Dense(2).name == "dense"


def test_interactive_logging_off_sends_fit_progress_to_logging(capsys, caplog):
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((4, 2), "float32"), np.zeros((4, 1), "float32")
    config.disable_interactive_logging()
    assert not mk.utils.is_interactive_logging_enabled()
    with caplog.at_level(logging.INFO, logger="minikeras"):
        model.fit(x, y, epochs=2, verbose=2)
    assert capsys.readouterr().out == ""
    lines = [r.getMessage() for r in caplog.records if r.name == "minikeras"]
    assert len(lines) == 2 and lines[1].startswith("Epoch 2/2") and "loss:" in lines[1]
    mk.utils.enable_interactive_logging()
    model.fit(x, y, epochs=1, verbose=2)
    assert capsys.readouterr().out.startswith("Epoch 1/1")


def test_progbar_lines_follow_interactive_logging(capsys, caplog):
    config.disable_interactive_logging()
    with caplog.at_level(logging.INFO, logger="minikeras"):
        bar = mk.utils.Progbar(target=2, verbose=1)
        bar.update(1, [("loss", 1.0)])
        bar.update(2, [("loss", 0.0)])
    assert capsys.readouterr().out == ""
    assert caplog.records[-1].getMessage().startswith("2/2 [") and "loss: 0.5" in caplog.text


def test_traceback_filtering_and_unsafe_deserialization_are_remembered():
    assert config.is_traceback_filtering_enabled()
    config.disable_traceback_filtering()
    assert not config.is_traceback_filtering_enabled()
    config.enable_traceback_filtering()
    assert config.is_traceback_filtering_enabled()
    config.enable_unsafe_deserialization()  # accepted; minikeras never loads code


def test_is_keras_tensor_and_get_source_inputs():
    a, b = mk.Input((2,), name="a"), mk.Input((2,), name="b")
    hidden = mk.layers.Dense(2)(a)
    out = mk.layers.Add()([hidden, b, a])
    assert backend.is_keras_tensor(out) and backend.is_keras_tensor(a)
    assert not backend.is_keras_tensor(mk.ops.ones((2,)))
    assert not backend.is_keras_tensor(mk.Variable(np.ones(2)))
    assert [t.name for t in mk.utils.get_source_inputs(out)] == ["a", "b"]
    assert mk.utils.get_source_inputs(b) == [b]
    assert mk.utils.get_source_inputs(hidden)[0] is a
    with pytest.raises(TypeError, match="expected a symbolic tensor"):
        mk.utils.get_source_inputs(np.ones(2))


def test_names_and_answers_match_keras():
    keras = pytest.importorskip("keras")
    for name in dir(keras.backend):
        if not name.startswith("_"):
            assert hasattr(backend, name), name
    for name in ("floatx", "epsilon", "image_data_format", "is_traceback_filtering_enabled"):
        assert getattr(config, name)() == getattr(keras.config, name)()
    assert config.is_interactive_logging_enabled() == keras.config.is_interactive_logging_enabled()
    for dtype in ("float16", "float64", "int8", "uint16", "bool", "int64"):
        assert backend.is_float_dtype(dtype) == keras.backend.is_float_dtype(dtype)
        assert backend.is_int_dtype(dtype) == keras.backend.is_int_dtype(dtype)
    for dtypes in (("int32", "float16"), ("uint8", "int8"), ("int32", float), ("int8", int)):
        assert backend.result_type(*dtypes) == keras.backend.result_type(*dtypes)
    a = keras.Input((2,), name="a")
    out = keras.layers.Add()([keras.layers.Dense(2)(a), a])
    assert [t.name for t in keras.utils.get_source_inputs(out)] == ["a"]


def test_callback_messages_follow_interactive_logging(capsys, caplog):
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((4, 2), "float32"), np.zeros((4, 1), "float32")
    stop = mk.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=1e9, verbose=1)
    config.disable_interactive_logging()
    with caplog.at_level(logging.INFO, logger="minikeras"):
        model.fit(x, y, epochs=5, verbose=0, callbacks=[stop])
    assert capsys.readouterr().out == ""
    assert [r.getMessage() for r in caplog.records] == ["Epoch 2: early stopping"]


def _final_lines_logged(api, logger_name, caplog, verbose):
    """The records `predict` then `evaluate` log with interactive logging off."""
    model = api.Sequential([api.Input((2,)), api.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((8, 2), "float32"), np.zeros((8, 1), "float32")
    api.config.disable_interactive_logging()
    try:
        counts = []
        for run in (
            lambda: model.predict(x, batch_size=4, verbose=verbose),
            lambda: model.evaluate(x, y, batch_size=4, verbose=verbose),
        ):
            caplog.clear()
            with caplog.at_level(logging.INFO, logger=logger_name):
                run()
            counts.append(len([r for r in caplog.records if r.name == logger_name]))
        return counts
    finally:
        api.config.enable_interactive_logging()


@pytest.mark.parametrize("verbose", [1, 2])
def test_predict_and_evaluate_log_their_final_line_with_interactive_logging_off(
    capsys, caplog, verbose
):
    assert _final_lines_logged(mk, "minikeras", caplog, verbose) == [1, 1]
    assert capsys.readouterr().out == ""
    messages = [r.getMessage() for r in caplog.records]
    assert messages[-1].startswith("Evaluate") and "loss:" in messages[-1]


@pytest.mark.parametrize("verbose", [1, 2])
def test_as_many_final_lines_logged_as_keras_logs(caplog, verbose):
    keras = pytest.importorskip("keras")
    # Keras's print_msg sends its last bar line to absl logging (the logger "absl").
    theirs = _final_lines_logged(keras, "absl", caplog, verbose)
    assert _final_lines_logged(mk, "minikeras", caplog, verbose) == theirs

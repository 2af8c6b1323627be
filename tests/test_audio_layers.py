"""STFTSpectrogram, MelSpectrogram and initializers.STFT: numpy's FFT and windows by hand,
Keras 3's values, configs and `.keras` files."""

import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import initializers, layers
from minikeras.initializers.stft_kernels import window_values
from minikeras.layers.preprocessing.mel_spectrogram import linear_to_mel_weight_matrix

RNG = np.random.default_rng(2)


def test_windows_by_their_formulas():
    np.testing.assert_allclose(window_values("hann", 5), [0.0, 0.5, 1.0, 0.5, 0.0], atol=1e-15)
    np.testing.assert_allclose(window_values("hann", 4, periodic=True), [0.0, 0.5, 1.0, 0.5])
    np.testing.assert_allclose(window_values("hamming", 3), [0.08, 1.0, 0.08])
    np.testing.assert_allclose(window_values("bartlett", 5), [0.0, 0.5, 1.0, 0.5, 0.0])
    np.testing.assert_allclose(window_values("blackman", 3), [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_array_equal(window_values("boxcar", 3), np.ones(3))
    assert window_values("hann", 1, periodic=True).tolist() == [1.0]
    with pytest.raises(ValueError, match="window must be one of"):
        initializers.STFT(window="kaiser")


def test_stft_kernels_are_the_dft_windowed_and_scaled():
    t, k = np.arange(8)[:, None], np.arange(5)[None, :]
    angles = -2.0 * np.pi * t * k / 8
    plain = initializers.STFT("imag", window=None, scaling=None)((8, 1, 5), dtype="float64")
    np.testing.assert_allclose(plain[:, 0], np.sin(angles), atol=1e-12)
    window = window_values("hann", 8)[:, None]
    density = initializers.get({"class_name": "STFTInitializer", "config": {"side": "real"}})
    np.testing.assert_allclose(
        density((8, 1, 5), dtype="float64")[:, 0],
        np.cos(angles) * window / np.sqrt(np.sum(window**2)),
        atol=1e-12,
    )
    spectrum = initializers.stft("real", window="hann", scaling="spectrum")((8, 1, 5))
    assert spectrum.dtype == np.float32
    np.testing.assert_allclose(spectrum[:, 0], np.cos(angles) * window / window.sum(), atol=1e-6)
    assert initializers.STFT is initializers.STFTInitializer is initializers.stft
    config = initializers.STFT("imag", [1.0, 2.0], None, True).get_config()
    assert config == {"side": "imag", "window": [1.0, 2.0], "periodic": True, "scaling": None}


def test_stft_mode_is_numpy_rfft_of_each_frame():
    x = RNG.normal(size=(2, 40, 3)).astype("float32")
    layer = layers.STFTSpectrogram(
        mode="stft", frame_length=8, frame_step=4, window=None, scaling=None
    )
    got = layer(x).numpy()  # (batch, frames, channels * 2 * bins)
    frames = np.stack([x[:, i : i + 8] for i in range(0, 33, 4)], axis=1)  # (b, f, 8, c)
    spectrum = np.fft.rfft(frames, axis=2)  # (b, f, 5, c)
    want = np.concatenate([spectrum.real, spectrum.imag], axis=2)  # (b, f, 10, c)
    want = np.moveaxis(want, 3, 2).reshape(2, 9, 30)  # channel by channel, as Keras
    np.testing.assert_allclose(got, want, atol=2e-5)
    assert [w.name for w in layer.weights] == ["real_kernel", "imag_kernel"]


def test_psd_magnitude_log_and_single_kernels():
    x = RNG.normal(size=(1, 32, 1)).astype("float32")
    arguments = {"frame_length": 8, "frame_step": 8, "window": None, "scaling": None}
    spectrum = np.fft.rfft(x[0, :, 0].reshape(4, 8), axis=1)
    power = np.abs(spectrum) ** 2
    psd = layers.STFTSpectrogram(mode="psd", **arguments)(x).numpy()[0]
    np.testing.assert_allclose(psd[:, [0, 4]], power[:, [0, 4]], rtol=1e-4)
    np.testing.assert_allclose(psd[:, 1:4], 2 * power[:, 1:4], rtol=1e-4)
    magnitude = layers.STFTSpectrogram(mode="magnitude", **arguments)(x).numpy()[0]
    np.testing.assert_allclose(magnitude, np.abs(spectrum), rtol=1e-4, atol=1e-5)
    log = layers.STFTSpectrogram(mode="log", **arguments)(x).numpy()[0]
    np.testing.assert_allclose(log, np.log(np.abs(spectrum)), rtol=1e-4, atol=1e-4)
    real_only = layers.STFTSpectrogram(mode="real", **arguments)
    real_only(x)
    assert [w.name for w in real_only.weights] == ["real_kernel"]


def test_stft_spectrogram_shapes_config_and_errors():
    layer = layers.STFTSpectrogram(frame_length=10, expand_dims=True, data_format="channels_first")
    assert layer.compute_output_shape((None, 2, None)) == (None, 2, None, 9)
    assert layer(np.ones((3, 2, 30), "float32")).shape == (3, 2, 5, 9)
    same = layers.STFTSpectrogram(frame_length=16, frame_step=5, padding="same", mode="stft")
    assert same.compute_output_shape((None, 100, 2)) == (None, 20, 2 * 2 * 9)
    config = same.get_config()
    assert config["frame_step"] == 5 and config["fft_length"] is None and config["mode"] == "stft"
    assert layers.STFTSpectrogram.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="frame_step"):
        layers.STFTSpectrogram(frame_length=8, frame_step=9)
    with pytest.raises(ValueError, match="fft_length"):
        layers.STFTSpectrogram(frame_length=8, fft_length=4)
    with pytest.raises(ValueError, match="mode"):
        layers.STFTSpectrogram(mode="power")
    with pytest.warns(UserWarning, match="power of two"):
        layers.STFTSpectrogram(frame_length=8, fft_length=12)
    with pytest.raises(TypeError, match="float inputs"):
        layers.STFTSpectrogram(frame_length=4)(np.ones((1, 8, 1), "int32"))


def test_mel_filter_bank_triangles():
    weights = linear_to_mel_weight_matrix(10, 257, 16000, 20.0, 8000.0)
    assert weights.shape == (257, 10) and not weights[0].any()  # no DC
    assert np.all(weights >= 0) and np.all(weights.max(axis=0) <= 1.0)
    assert np.all(np.diff(np.argmax(weights, axis=0)) > 0)  # peaks rise with the band
    # A band's triangle rises to its centre and falls after it, in mel.
    mel = 1127.0 * np.log(1.0 + np.linspace(0, 8000, 257) / 700.0)
    edges = np.linspace(*(1127.0 * np.log(1.0 + np.array([20.0, 8000.0]) / 700.0)), 12)
    inside = (mel > edges[3]) & (mel < edges[4])
    np.testing.assert_allclose(
        weights[inside, 3], (mel[inside] - edges[3]) / (edges[4] - edges[3]), rtol=1e-5
    )


def test_mel_spectrogram_by_hand_without_db():
    x = RNG.normal(size=(2, 200)).astype("float32")
    layer = layers.MelSpectrogram(
        fft_length=64, sequence_stride=32, num_mel_bins=6, power_to_db=False, window=None
    )
    got = layer(x).numpy()
    padded = np.pad(x, [(0, 0), (32, 32)], mode="reflect")
    frames = np.stack([padded[:, i : i + 64] for i in range(0, 201, 32)], axis=1)
    power = np.abs(np.fft.rfft(frames, axis=-1)) ** 2
    want = np.swapaxes(power @ linear_to_mel_weight_matrix(6, 33, 16000, 20.0, 8000), 1, 2)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    assert got.shape == (2, 6, 7) and layer.compute_output_shape((None, 200)) == (None, 6, 7)
    decibels = layers.MelSpectrogram(
        fft_length=64, sequence_stride=32, num_mel_bins=6, window=None, top_db=10.0
    )(x).numpy()
    expected = 10 * np.log10(np.maximum(want, 1e-10))
    np.testing.assert_allclose(decibels, np.maximum(expected, expected.max() - 10.0), atol=1e-3)


def test_mel_spectrogram_config_and_errors():
    layer = layers.MelSpectrogram(fft_length=256, sequence_stride=64, num_mel_bins=20)
    config = layer.get_config()
    assert config["sequence_length"] == 256 and config["max_freq"] == 8000
    assert layers.MelSpectrogram.from_config(config).get_config() == config
    assert layer.compute_output_shape((None, None)) == (None, 20, None)
    assert layer.compute_output_shape((1023,)) == (20, 16)
    with pytest.raises(ValueError, match="fft_length"):
        layers.MelSpectrogram(fft_length=64, sequence_length=128)
    with pytest.raises(ValueError, match="window"):
        layers.MelSpectrogram(window="blackman")


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


@pytest.mark.parametrize("side", ["real", "imag"])
@pytest.mark.parametrize(
    "window, scaling, periodic",
    [("hann", "density", False), ("hamming", "spectrum", True), (None, None, False),
     ("blackman", "density", True), ("bartlett", None, False)],
)  # fmt: skip
def test_stft_initializer_same_as_keras(side, window, scaling, periodic):
    keras = _keras()
    theirs = keras.initializers.STFT(side, window, scaling, periodic)((64, 1, 65))
    ours = initializers.STFT(side, window, scaling, periodic)((64, 1, 65))
    np.testing.assert_allclose(ours, keras.ops.convert_to_numpy(theirs), atol=1e-6)
    assert initializers.STFT(side, window, scaling, periodic).get_config() == (
        keras.initializers.STFT(side, window, scaling, periodic).get_config()
    )


STFT_CASES = [
    ({"mode": "log", "frame_length": 16}, (2, 100, 2)),
    (
        {"mode": "magnitude", "frame_length": 16, "frame_step": 5, "fft_length": 32,
         "padding": "same"},
        (2, 100, 1),
    ),
    (
        {"mode": "psd", "frame_length": 12, "window": "hamming", "periodic": True,
         "scaling": "spectrum"},
        (2, 64, 3),
    ),
    ({"mode": "real", "frame_length": 8, "expand_dims": True}, (2, 40, 2)),
    ({"mode": "imag", "frame_length": 8, "data_format": "channels_first"}, (2, 2, 40)),
    ({"mode": "stft", "frame_length": 10, "window": None, "scaling": None}, (1, 50, 2)),
]  # fmt: skip


@pytest.mark.parametrize("arguments, shape", STFT_CASES)
def test_stft_spectrogram_same_as_keras_and_files_cross(tmp_path, arguments, shape):
    keras = _keras()
    x = RNG.normal(size=shape).astype("float32")

    def build(lib):
        inputs = lib.Input(shape[1:])
        return lib.Model(inputs, lib.layers.STFTSpectrogram(**arguments)(inputs))

    theirs = build(keras)
    want = np.asarray(theirs.predict(x, verbose=0))
    ours = build(mk)
    np.testing.assert_allclose(ours.predict(x, verbose=0), want, rtol=1e-5, atol=1e-5)
    theirs.layers[-1].set_weights([w * 1.5 for w in theirs.layers[-1].get_weights()])
    want = np.asarray(theirs.predict(x, verbose=0))  # (weights apart from the initial ones)
    theirs.save(tmp_path / "theirs.keras")
    back = mk.models.load_model(tmp_path / "theirs.keras")
    np.testing.assert_allclose(back.predict(x, verbose=0), want, rtol=1e-5, atol=1e-5)
    back.save(tmp_path / "ours.keras")
    again = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(np.asarray(again.predict(x, verbose=0)), want, rtol=1e-5, atol=1e-5)


MEL_CASES = [
    ({}, (2, 16000)),
    ({"fft_length": 256, "sequence_stride": 64, "num_mel_bins": 40, "sampling_rate": 8000},
     (3, 1000)),
    ({"fft_length": 128, "sequence_stride": 32, "sequence_length": 100, "window": "hamming",
      "power_to_db": False, "mag_exp": 1.0}, (2, 511)),
    ({"fft_length": 64, "sequence_stride": 16, "num_mel_bins": 8, "min_freq": 100.0,
      "max_freq": 3000, "top_db": 20.0, "ref_power": 2.0}, (300,)),
    ({"fft_length": 64, "sequence_stride": 16, "num_mel_bins": 8, "window": None}, (2, 300)),
]  # fmt: skip


@pytest.mark.parametrize("arguments, shape", MEL_CASES)
def test_mel_spectrogram_same_as_keras(arguments, shape):
    keras = _keras()
    x = RNG.normal(size=shape).astype("float32")
    theirs = keras.layers.MelSpectrogram(**arguments)
    want = keras.ops.convert_to_numpy(theirs(x))
    ours = layers.MelSpectrogram(**arguments)
    got = ours(x).numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-3 * np.abs(want).max())
    ignored = {"dtype": None, "name": None}
    assert {**ours.get_config(), **ignored} == {**theirs.get_config(), **ignored}


def test_mel_spectrogram_file_from_keras_loads(tmp_path):
    keras = _keras()
    arguments = {"fft_length": 64, "sequence_stride": 16, "num_mel_bins": 8}
    x = RNG.normal(size=(2, 320)).astype("float32")
    inputs = keras.Input((320,))
    theirs = keras.Model(inputs, keras.layers.MelSpectrogram(**arguments)(inputs))
    theirs.save(tmp_path / "theirs.keras")
    back = mk.models.load_model(tmp_path / "theirs.keras")
    want = np.asarray(theirs.predict(x, verbose=0))
    np.testing.assert_allclose(back.predict(x, verbose=0), want, rtol=2e-5, atol=1e-3)
    back.save(tmp_path / "ours.keras")
    again = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(np.asarray(again.predict(x, verbose=0)), want, rtol=2e-5, atol=1e-3)

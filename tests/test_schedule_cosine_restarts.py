"""`CosineDecayRestarts` (SGDR): by hand, against Keras, in configs, files and a fit."""

import json
import math

import numpy as np
import pytest

import minikeras as mk
from minikeras.optimizers import schedules


def _by_hand(step, initial, first, t_mul, m_mul, alpha):
    """Walks the periods one by one (no closed form), as the schedule's docstring says."""
    start, length, scale = 0.0, float(first), 1.0
    while step >= start + length:
        start, length, scale = start + length, length * t_mul, scale * m_mul
    cosine = 0.5 * scale * (1.0 + math.cos(math.pi * (step - start) / length))
    return initial * ((1.0 - alpha) * cosine + alpha)


@pytest.mark.parametrize(
    "initial, first, t_mul, m_mul, alpha",
    [(0.1, 3, 2.0, 1.0, 0.0), (1.0, 2, 1.0, 0.5, 0.0), (0.5, 4, 1.5, 0.8, 0.1)],
)
def test_periods_by_hand(initial, first, t_mul, m_mul, alpha):
    schedule = schedules.CosineDecayRestarts(initial, first, t_mul, m_mul, alpha)
    for step in range(40):
        expected = _by_hand(step, initial, first, t_mul, m_mul, alpha)
        assert schedule(step) == pytest.approx(expected, rel=1e-9, abs=1e-12), step


def test_defaults_name_and_errors_are_kerass():
    schedule = schedules.CosineDecayRestarts(0.1, 10)
    assert schedule.get_config() == {
        "initial_learning_rate": 0.1,
        "first_decay_steps": 10,
        "t_mul": 2.0,
        "m_mul": 1.0,
        "alpha": 0.0,
        "name": "SGDRDecay",
    }
    with pytest.raises(ValueError, match="`first_decay_steps` must be a number > 0"):
        schedules.CosineDecayRestarts(0.1, 0)
    with pytest.raises(ValueError, match="`t_mul` must be a number"):
        schedules.CosineDecayRestarts(0.1, 5, t_mul="2")


def test_config_round_trip_and_an_optimizer_file(tmp_path):
    schedule = schedules.CosineDecayRestarts(0.05, 4, t_mul=1.5, m_mul=0.8, alpha=0.1)
    config = schedules.serialize(schedule)
    json.dumps(config)
    clone = schedules.deserialize(config)
    assert [clone(s) for s in range(20)] == [schedule(s) for s in range(20)]
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile(mk.optimizers.SGD(schedule), "mse")
    x, y = np.ones((8, 3), "float32"), np.zeros((8, 1), "float32")
    model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    for name in ("model.keras", "model.minikeras"):
        model.save(tmp_path / name)
        loaded = mk.saving.load_model(tmp_path / name)
        saved = loaded.optimizer.get_config()["learning_rate"]
        assert saved == model.optimizer.get_config()["learning_rate"]
        assert saved["class_name"] == "CosineDecayRestarts"
        steps = int(loaded.optimizer.iterations.numpy())
        assert steps == 4
        assert float(loaded.optimizer.learning_rate) == pytest.approx(schedule(steps), rel=1e-6)


def test_matches_keras():
    keras = pytest.importorskip("keras")
    for args in ((0.1, 3), (1.0, 2, 1.0, 0.5), (0.5, 4, 1.5, 0.8, 0.1)):
        ours = schedules.CosineDecayRestarts(*args)
        theirs = keras.optimizers.schedules.CosineDecayRestarts(*args)
        steps = range(30)
        np.testing.assert_allclose(
            [ours(s) for s in steps], [float(theirs(s)) for s in steps], rtol=1e-5, atol=1e-7
        )
        assert ours.get_config() == theirs.get_config()


def test_files_cross_to_keras_and_back(tmp_path):
    keras = pytest.importorskip("keras")
    schedule = schedules.CosineDecayRestarts(0.05, 4, t_mul=1.5, m_mul=0.8, alpha=0.1)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile(mk.optimizers.Adam(schedule), "mse")
    model.fit(np.ones((8, 3), "float32"), np.zeros((8, 1), "float32"), batch_size=4, verbose=0)
    model.save(tmp_path / "ours.keras")
    theirs = keras.saving.load_model(tmp_path / "ours.keras")
    rate = theirs.optimizer._learning_rate
    assert isinstance(rate, keras.optimizers.schedules.CosineDecayRestarts)
    assert rate.get_config() == schedule.get_config()
    theirs.save(tmp_path / "theirs.keras")
    back = mk.saving.load_model(tmp_path / "theirs.keras")
    assert back.optimizer.get_config()["learning_rate"]["config"] == schedule.get_config()

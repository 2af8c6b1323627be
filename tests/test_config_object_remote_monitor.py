"""utils.Config (the attribute-style dict) and callbacks.RemoteMonitor (with a fake `requests`)."""

import json
import sys
import types

import numpy as np
import pytest

import minikeras as mk

# ------------------------------------------------------------------- Config


def test_config_entries_as_attributes_and_items():
    config = mk.utils.Config(learning_rate=0.1, momentum=0.9)
    config.use_ema = True
    config["seed"] = 123
    assert config.seed == 123 and config["use_ema"] is True and config.learning_rate == 0.1
    assert list(config) == ["learning_rate", "momentum", "seed", "use_ema"]  # sorted
    assert list(config.keys()) == ["learning_rate", "momentum", "use_ema", "seed"]  # inserted
    assert len(config) == 4 and "seed" in config and "nope" not in config
    assert config.get("nope", 7) == 7 and config.pop("seed") == 123 and "seed" not in config
    config.update({"a": 1}, b=2)
    assert config.as_dict() == {
        "learning_rate": 0.1,
        "momentum": 0.9,
        "use_ema": True,
        "a": 1,
        "b": 2,
    }
    assert json.loads(config.to_json()) == config.as_dict()
    copied = config.as_dict()
    copied["a"] = 5
    assert config.a == 1
    del config["a"]
    del config.b
    assert "a" not in config and "b" not in config


def test_config_unknown_attribute_names_the_closest_entry():
    config = mk.utils.Config(learning_rate=0.1)
    with pytest.raises(AttributeError, match="Did you mean 'learning_rate'"):
        _ = config.learning_rat
    with pytest.raises(AttributeError, match="Unknown attribute: 'zzz'.$"):
        _ = config.zzz


def test_config_frozen_refuses_every_change():
    config = mk.utils.Config(a=1)
    config.freeze()
    assert config.frozen
    changes = [
        lambda: setattr(config, "a", 2),
        lambda: config.__setitem__("b", 2),
        lambda: config.pop("a"),
        lambda: config.update(a=3),
        lambda: config.__delitem__("a"),
    ]
    for change in changes:
        with pytest.raises(ValueError, match="frozen"):
            change()
    assert config.as_dict() == {"a": 1}
    config.unfreeze()
    config.a = 2
    assert config.a == 2 and not config.frozen


def test_config_own_names_are_not_entries():
    config = mk.utils.Config()
    with pytest.raises(AttributeError, match="set it as an item"):
        config.keys = 1
    config["keys"] = 1
    assert config["keys"] == 1 and callable(config.keys)


def test_config_as_keras_config():
    keras = pytest.importorskip("keras")
    results = []
    for lib in (keras, mk):
        config = lib.utils.Config(b=1, a=2)
        config.c = [3]
        config["d"] = "x"
        config.update(e=5)
        results.append((list(config), config.as_dict(), config.to_json(), config.get("z", 0)))
        config.freeze()
        with pytest.raises(ValueError):
            config.a = 3
    assert results[0] == results[1]


# ------------------------------------------------------------------- RemoteMonitor


class FakeRequests(types.ModuleType):
    """What RemoteMonitor uses of `requests`: `post`, and `exceptions.RequestException`."""

    def __init__(self, fail=False):
        super().__init__("requests")
        self.posts, self.fail = [], fail
        self.exceptions = types.SimpleNamespace(
            RequestException=type("RequestException", (OSError,), {})
        )

    def post(self, url, data=None, json=None, headers=None):
        if self.fail:
            raise self.exceptions.RequestException("connection refused")
        self.posts.append({"url": url, "data": data, "json": json, "headers": headers})


def fit_with(monitor, epochs=2):
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model.fit(
        np.ones((4, 2)), np.ones((4, 1)), epochs=epochs, verbose=0, callbacks=[monitor]
    )


def test_remote_monitor_posts_each_epoch_in_a_form(monkeypatch):
    fake = FakeRequests()
    monkeypatch.setitem(sys.modules, "requests", fake)
    history = fit_with(mk.callbacks.RemoteMonitor(root="http://host:1", headers={"X": "y"}))
    assert [post["url"] for post in fake.posts] == ["http://host:1/publish/epoch/end/"] * 2
    sent = [json.loads(post["data"]["data"]) for post in fake.posts]
    assert sent == [{"epoch": e, "loss": history.history["loss"][e]} for e in (0, 1)]
    assert all(post["headers"] == {"X": "y"} and post["json"] is None for post in fake.posts)


def test_remote_monitor_as_json_and_numpy_values(monkeypatch):
    fake = FakeRequests()
    monkeypatch.setitem(sys.modules, "requests", fake)
    monitor = mk.callbacks.RemoteMonitor(path="/p", field="f", send_as_json=True)
    monitor.on_epoch_end(3, {"loss": np.float32(0.5), "acc": np.array(0.25), "n": 2})
    (post,) = fake.posts
    assert post["url"] == "http://localhost:9000/p" and post["data"] is None
    assert post["json"] == {"epoch": 3, "loss": 0.5, "acc": 0.25, "n": 2}
    assert all(type(value) in (int, float) for value in post["json"].values())
    json.dumps(post["json"])


def test_remote_monitor_warns_when_the_server_is_unreachable(monkeypatch):
    monkeypatch.setitem(sys.modules, "requests", FakeRequests(fail=True))
    with pytest.warns(UserWarning, match="Could not reach RemoteMonitor root server at http://x"):
        history = fit_with(mk.callbacks.RemoteMonitor(root="http://x"), epochs=1)
    assert len(history.history["loss"]) == 1


def test_remote_monitor_without_requests_fails_before_training(monkeypatch):
    monkeypatch.setitem(sys.modules, "requests", None)  # (import requests raises ImportError)
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    before = [w.numpy() for w in model.weights]
    with pytest.raises(ImportError, match="needs the `requests` package"):
        model.fit(
            np.ones((4, 2)), np.ones((4, 1)), verbose=0, callbacks=[mk.callbacks.RemoteMonitor()]
        )
    assert all(np.array_equal(a, w.numpy()) for a, w in zip(before, model.weights))

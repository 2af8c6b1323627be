"""`RandomErasing`, `MixUp`, `CutMix` and `Pipeline`: boxes and blends checked by hand and by
their invariants (a label is its image's share of each source), training against inference,
seeds, configs, and Keras 3 (`.keras` files both ways) when `keras` is installed."""

import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.layers.preprocessing.mixing import random_boxes


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def _sources(batch=64, size=8):
    """Image i is the constant i + 1, label i one-hot: a pixel says where it came from."""
    images = np.broadcast_to(
        np.arange(1.0, batch + 1, dtype="float32")[:, None, None, None], (batch, size, size, 1)
    ).copy()
    return images, np.eye(batch, dtype="float32")


# ----------------------------------------------------------------------------------- boxes


def test_boxes_by_hand():
    rng = np.random.default_rng(0)
    mask, area = random_boxes(rng, (3, 4, 6, 2), [1.0, 0.5, 0.0], [1.0, 0.5, 0.5])
    assert mask.shape == (3, 4, 6, 1) and mask.dtype == bool
    assert mask[0].all() and not mask[2].any()
    np.testing.assert_allclose(area, [1.0, 0.25, 0.0])
    rows, cols = np.nonzero(mask[1, :, :, 0])
    assert np.ptp(rows) + 1 == 2 and np.ptp(cols) + 1 == 3 and mask[1].sum() == 6  # 2 x 3


# -------------------------------------------------------------------------------- erasing


def test_erasing_fills_a_box_of_the_drawn_size():
    x = np.full((200, 10, 10, 3), 100.0, "float32")
    out = layers.RandomErasing(factor=(1.0, 1.0), scale=(0.25, 0.25), fill_value=7, seed=1)(
        x, training=True
    ).numpy()
    erased = out == 7.0
    assert set(np.unique(out)) <= {7.0, 100.0}
    assert np.all(erased.reshape(200, -1).sum(axis=1) == 5 * 5 * 3)  # half of each side
    assert np.array_equal(erased[..., 0], erased[..., 2])  # all channels


def test_erasing_probability_fill_values_and_inference():
    x = np.full((4000, 4, 4, 3), 100.0, "float32")
    layer = layers.RandomErasing(scale=(1.0, 1.0), fill_value=[0, 300, 50], seed=2)
    out = layer(x, training=True).numpy()
    erased = (out != 100.0).reshape(4000, -1).any(axis=1)
    assert abs(erased.mean() - 0.5) < 0.03  # p ~ U(0, 1), then a uniform draw below it
    np.testing.assert_array_equal(out[erased][0, 0, 0], [0.0, 255.0, 50.0])  # clipped to range
    noise = layers.RandomErasing((1.0, 1.0), (1.0, 1.0), value_range=(0, 1), seed=3)
    values = noise(np.full((50, 4, 4, 1), 0.5, "float32"), training=True).numpy()
    assert values.min() >= 0.0 and values.max() <= 1.0 and np.mean(values == 0.0) > 0.4
    np.testing.assert_array_equal(layer(x[:3], training=False).numpy(), x[:3])
    with pytest.raises(ValueError, match="fill_value"):
        layers.RandomErasing(fill_value=[1, 2])
    with pytest.raises(ValueError, match="scale"):
        layers.RandomErasing(scale=1.5)


# ---------------------------------------------------------------------- MixUp and CutMix


def test_mix_up_blends_two_images_and_their_labels_alike():
    images, labels = _sources()
    out = layers.MixUp(alpha=0.4, seed=4)({"images": images, "labels": labels}, training=True)
    mixed, mixed_labels = out["images"].numpy(), out["labels"].numpy()
    for i in range(len(images)):
        sources = np.nonzero(mixed_labels[i] > 1e-6)[0]
        assert 1 <= len(sources) <= 2 and i in sources
        np.testing.assert_allclose(mixed_labels[i].sum(), 1.0, rtol=1e-5)
        # the image is the same blend of the source images: a constant
        np.testing.assert_allclose(mixed[i], mixed_labels[i] @ images[:, 0, 0, 0], rtol=1e-5)


def test_cut_mix_pastes_a_box_and_labels_by_area():
    # Labels mix by the box's area (real-valued, as Keras), which the pasted pixels count
    # to within one row and one column of pixels.
    images, labels = _sources(size=32)
    out = layers.CutMix(seed=5)({"images": images, "labels": labels}, training=True)
    mixed, mixed_labels = out["images"].numpy(), out["labels"].numpy()
    for i in range(len(images)):
        values, counts = np.unique(mixed[i], return_counts=True)
        assert len(values) <= 2
        shares = np.zeros(len(images))
        shares[values.astype(int) - 1] = counts / mixed[i].size
        np.testing.assert_allclose(mixed_labels[i].sum(), 1.0, rtol=1e-5)
        np.testing.assert_allclose(mixed_labels[i], shares, atol=(2 * 32 + 1) / 32**2)
        pasted = np.nonzero(mixed[i, :, :, 0] != i + 1)
        if len(pasted[0]):  # one box: its pixels fill their bounding rectangle
            rows, cols = np.ptp(pasted[0]) + 1, np.ptp(pasted[1]) + 1
            assert rows * cols == len(pasted[0]) or i + 1 not in values


def test_mixing_layers_pass_through_at_inference_and_take_plain_images():
    images, labels = _sources(4)
    for layer in (layers.MixUp(seed=1), layers.CutMix(seed=1)):
        out = layer({"images": images, "labels": labels}, training=False)
        np.testing.assert_array_equal(out["images"].numpy(), images)
        np.testing.assert_array_equal(out["labels"].numpy(), labels)
        assert layer(images, training=True).shape == images.shape
        single = layer(images[0], training=True).numpy()  # one image: nothing to mix with
        np.testing.assert_array_equal(single, images[0])
        with pytest.raises(ValueError, match="bounding boxes"):
            layer({"images": images, "bounding_boxes": labels}, training=True)
    with pytest.raises(ValueError, match="alpha"):
        layers.MixUp(alpha=0.0)
    with pytest.raises(ValueError, match="factor"):
        layers.CutMix(factor=2.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.MixUp(alpha=0.3, seed=9),
        lambda: layers.CutMix(factor=0.5, seed=9),
        lambda: layers.RandomErasing(seed=9),
    ],
)
def test_a_seed_gives_the_same_draws_and_configs_round_trip(make):
    images, _ = _sources(16)
    first, second = make(), make()
    np.testing.assert_array_equal(
        first(images, training=True).numpy(), second(images, training=True).numpy()
    )
    config = first.get_config()
    assert type(first).from_config(config).get_config() == config
    assert first.compute_output_shape((None, None, 5, 3)) == (None, None, 5, 3)
    assert first(np.zeros((0, 4, 4, 3), "float32"), training=True).shape == (0, 4, 4, 3)


# ------------------------------------------------------------------------------- Pipeline


def test_pipeline_applies_its_layers_in_order_passing_training():
    pipeline = layers.Pipeline(
        [layers.Rescaling(1 / 255), layers.RandomInvert((1.0, 1.0), value_range=(0, 1))]
    )
    x = np.full((2, 3, 3, 1), 51.0, "float32")
    np.testing.assert_allclose(pipeline(x, training=False).numpy(), 0.2)
    for training in (None, True):  # (a call without `training` augments, as in Keras)
        np.testing.assert_allclose(pipeline(x, training=training).numpy(), 0.8, rtol=1e-6)
    model = mk.Sequential([mk.Input((3, 3, 1)), pipeline])
    np.testing.assert_allclose(model.predict(x, verbose=0), 0.2)  # predict: not training
    assert [type(layer).__name__ for layer in pipeline.layers] == ["Rescaling", "RandomInvert"]
    assert pipeline.compute_output_shape((None, None, 3, 1)) == (None, None, 3, 1)
    with pytest.raises(ValueError, match="list of Layer"):
        layers.Pipeline(layers.Rescaling(2.0))


def test_pipeline_in_a_model_builds_trains_and_saves(tmp_path):
    pipeline = layers.Pipeline([layers.Resizing(4, 4), layers.Flatten(), layers.Dense(3)])
    model = mk.Sequential([mk.Input((6, 6, 1)), pipeline])
    assert model.output_shape == (None, 3)
    assert len(model.trainable_weights) == 2  # the Dense's, found in the pipeline
    x = np.random.default_rng(0).standard_normal((8, 6, 6, 1)).astype("float32")
    model.compile(optimizer="sgd", loss="mse")
    before = pipeline.layers[2].kernel.numpy().copy()
    model.fit(x, np.zeros((8, 3), "float32"), epochs=1, verbose=0)
    assert not np.array_equal(pipeline.layers[2].kernel.numpy(), before)
    config = pipeline.get_config()
    assert sorted(config) == ["layers", "name"]  # as Keras's (no trainable, no dtype)
    assert layers.Pipeline.from_config(config).get_config()["layers"][2]["config"]["units"] == 3
    model.save(tmp_path / "m.keras")
    loaded = mk.saving.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_keras_computes_the_same_erasing_of_whole_images():
    keras = _keras()
    x = np.random.default_rng(1).uniform(0, 255, (3, 4, 5, 3)).astype("float32")
    # (a list of fill values fails in Keras 3.15.1 under jax: its full_like gets a TrackedList)
    options = {"factor": (1.0, 1.0), "scale": (1.0, 1.0), "fill_value": 42.0}
    ours = layers.RandomErasing(**options)(x, training=True).numpy()
    theirs = np.asarray(keras.layers.RandomErasing(**options)(x, training=True))
    np.testing.assert_array_equal(ours, theirs)


def test_keras_files_cross_both_ways(tmp_path):
    keras = _keras()
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 255, (4, 6, 6, 3)).astype("float32")

    def build(api):
        inputs = api.Input((6, 6, 3))
        y = api.layers.Pipeline(
            [
                api.layers.RandomErasing(0.5, (0.1, 0.2), seed=1),
                api.layers.Rescaling(1 / 255),
                api.layers.Dense(2),
            ],
            name="augment",
        )(inputs)
        return api.Model(inputs, y)

    ours = build(mk)
    ours.save(tmp_path / "ours.keras")
    loaded = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(
        np.asarray(loaded.predict(x, verbose=0)), ours.predict(x, verbose=0), atol=1e-4
    )

    theirs = build(keras)
    theirs.save(tmp_path / "theirs.keras")
    back = mk.saving.load_model(tmp_path / "theirs.keras")
    np.testing.assert_allclose(
        back.predict(x, verbose=0), np.asarray(theirs.predict(x, verbose=0)), atol=1e-4
    )
    assert [type(layer).__name__ for layer in back.layers[1].layers] == [
        "RandomErasing", "Rescaling", "Dense"
    ]  # fmt: skip


MIXING = [("MixUp", {"alpha": 0.3, "seed": 2}), ("CutMix", {"factor": (0.2, 0.7), "seed": 3})]


@pytest.mark.parametrize("name, options", MIXING)
def test_keras_reads_the_mixing_layers_configs_and_back(name, options):
    # (Keras 3.15.1 under jax cannot put MixUp or CutMix in a functional model: its
    # permutation needs a known batch size; configs cross through serialize.)
    keras = _keras()
    ours = getattr(layers, name)(**options)
    theirs = keras.layers.deserialize(layers.serialize(ours))
    assert type(theirs).__name__ == name
    back = layers.deserialize(keras.layers.serialize(theirs))
    assert type(back) is type(ours)
    for key in options:
        assert np.allclose(back.get_config()[key], ours.get_config()[key])


def test_one_image_given_without_a_batch_axis_keeps_its_labels():
    images, labels = _sources(4)
    for layer in (layers.MixUp(seed=1), layers.CutMix(seed=1)):
        out = layer({"images": images[0], "labels": labels[0]}, training=True)
        np.testing.assert_array_equal(out["labels"].numpy(), labels[0])  # (it mixed the classes)
        np.testing.assert_array_equal(out["images"].numpy(), images[0])


def test_threads_sharing_one_mixing_layer_mix_each_call_with_its_own_draw():
    import threading

    layer = layers.MixUp(alpha=1.0, seed=0)
    images = np.arange(8, dtype="float32")[:, None, None, None] * np.ones((1, 2, 2, 1), "float32")
    labels = np.arange(8, dtype="float32")[:, None]  # the label is the image's value
    wrong = []

    def work():
        for _ in range(60):
            out = layer({"images": images, "labels": labels}, training=True)
            mixed = out["images"].numpy()[:, 0, 0, 0]
            wrong.append(not np.allclose(mixed, out["labels"].numpy()[:, 0], atol=1e-4))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(wrong) == 240 and not any(wrong)  # (a draw kept on the layer mixed some)

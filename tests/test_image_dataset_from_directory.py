"""`image_dataset_from_directory` on small trees of PNG/JPEG files written here with Pillow.

Each image is one solid grey level (or a hand-drawn pattern), so the values a
batch must hold, the labels that go with them and Keras's file order
(`np.random.RandomState(seed).shuffle` of the sorted paths) are known by hand.
"""

import os

import numpy as np
import pytest

import minikeras as mk

Image = pytest.importorskip("PIL.Image")

WHERE = "image_dataset_from_directory"


def _save(path, pixels, suffix=".png"):
    path = str(path) + suffix
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.fromarray(np.asarray(pixels, dtype="uint8")).save(path)
    return path


def _grey(value, size=(6, 6)):
    return np.full((*size, 3), value)


@pytest.fixture
def tree(tmp_path):
    """Classes `cat` (levels 10, 20, 30; one in a nested folder) and `dog` (200, 210)."""
    root = tmp_path / "images"
    for name, value in (("a", 10), ("b", 20)):
        _save(root / "cat" / name, _grey(value))
    _save(root / "cat" / "deep" / "c", _grey(30))
    _save(root / "dog" / "d", _grey(200))
    _save(root / "dog" / "e", _grey(210), suffix=".PNG")  # suffixes match in any case
    _save(root / "loose", _grey(99))  # a file beside the classes is in no class
    _save(root / ".hidden" / "f", _grey(99))  # hidden folders are no class
    (root / "dog" / "notes.txt").write_text("not an image")
    return root


def _read(dataset):
    images, labels = zip(*list(dataset))
    return np.concatenate(images), np.concatenate(labels)


def _sorted_paths(root):
    names = ["cat/a.png", "cat/b.png", "cat/deep/c.png", "dog/d.png", "dog/e.PNG"]
    return [os.path.join(str(root), *name.split("/")) for name in names]


def test_classes_files_and_labels_in_alphanumeric_order(tree, capsys):
    dataset = mk.utils.image_dataset_from_directory(
        tree, image_size=(4, 4), batch_size=2, shuffle=False
    )
    assert capsys.readouterr().out == "Found 5 files belonging to 2 classes.\n"
    assert dataset.class_names == ["cat", "dog"]
    assert dataset.file_paths == _sorted_paths(tree)
    assert len(dataset) == 3 and isinstance(dataset, mk.utils.PyDataset)
    images, labels = _read(dataset)
    assert images.dtype == np.float32 and images.shape == (5, 4, 4, 3)
    np.testing.assert_array_equal(images[:, 0, 0, 0], [10, 20, 30, 200, 210])
    assert np.all(images == images[:, :1, :1, :1])  # solid levels stay solid when resized
    assert labels.dtype == np.int32
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 1])
    assert [len(batch[1]) for batch in dataset] == [2, 2, 1]


@pytest.mark.parametrize(
    "label_mode, expected",
    [
        ("int", np.array([0, 0, 0, 1, 1], dtype="int32")),
        ("categorical", np.array([[1, 0]] * 3 + [[0, 1]] * 2, dtype="float32")),
        ("binary", np.array([[0], [0], [0], [1], [1]], dtype="float32")),
    ],
)
def test_label_modes(tree, label_mode, expected):
    dataset = mk.utils.image_dataset_from_directory(
        tree, label_mode=label_mode, image_size=(3, 3), shuffle=False, verbose=False
    )
    (_, labels), *_ = list(dataset)
    assert labels.dtype == expected.dtype
    np.testing.assert_array_equal(labels, expected)


def test_no_labels_yields_images_alone_and_class_names_none(tree, capsys):
    for kwargs in ({"label_mode": None}, {"labels": None}):
        dataset = mk.utils.image_dataset_from_directory(
            tree, image_size=(3, 3), shuffle=False, **kwargs
        )
        images = dataset[0]
        assert isinstance(images, np.ndarray) and images.shape[1:] == (3, 3, 3)
    assert dataset.class_names is None and len(images) == 7  # the whole tree, hidden included
    assert capsys.readouterr().out.splitlines()[-1] == "Found 7 files."


def test_color_modes_and_channels_first(tree):
    for color_mode, channels in (("grayscale", 1), ("rgb", 3), ("rgba", 4)):
        images, _ = mk.utils.image_dataset_from_directory(
            tree, color_mode=color_mode, image_size=(2, 2), shuffle=False, verbose=False
        )[0]
        assert images.shape == (5, 2, 2, channels)
        np.testing.assert_array_equal(images[:, 0, 0, 0], [10, 20, 30, 200, 210])
    np.testing.assert_array_equal(images[..., 3], 255)  # an opaque alpha channel
    images, _ = mk.utils.image_dataset_from_directory(
        tree, image_size=(2, 5), data_format="channels_first", shuffle=False, verbose=False
    )[0]
    assert images.shape == (5, 3, 2, 5)


def test_resize_nearest_crop_and_pad_by_hand(tmp_path):
    block = np.array([[0, 100], [200, 250]])
    _save(tmp_path / "a" / "x", np.repeat(block[:, :, None], 3, axis=2))
    images, _ = mk.utils.image_dataset_from_directory(
        tmp_path, image_size=(4, 4), interpolation="nearest", verbose=False
    )[0]
    np.testing.assert_array_equal(images[0, :, :, 0], np.kron(block, np.ones((2, 2))))
    # 4 rows x 8 columns: 0 | 100 (the centred 4x4) | 200; the crop keeps the middle only
    stripes = np.repeat(np.array([0, 0, 100, 100, 100, 100, 200, 200])[None, :], 4, axis=0)
    _save(tmp_path / "b" / "x", np.repeat(stripes[:, :, None], 3, axis=2))
    images = mk.utils.image_dataset_from_directory(
        tmp_path / "b", labels=None, image_size=(2, 2), crop_to_aspect_ratio=True, verbose=False
    )[0]
    np.testing.assert_array_equal(images, 100)
    # 2 x 4 padded with a zero row above and below to 4 x 4, then not resized
    _save(tmp_path / "c" / "x", np.full((2, 4, 3), 100))
    images = mk.utils.image_dataset_from_directory(
        tmp_path / "c", labels=None, image_size=(4, 4), pad_to_aspect_ratio=True, verbose=False
    )[0]
    np.testing.assert_array_equal(images[0, :, 0, 0], [0, 100, 100, 0])


@pytest.mark.parametrize("interpolation", ["bicubic", "lanczos3", "lanczos5"])
def test_the_resize_ops_other_filters(tmp_path, interpolation):
    pixels = np.random.default_rng(0).integers(0, 256, (6, 9, 3))
    _save(tmp_path / "a" / "x", pixels)
    images = mk.utils.image_dataset_from_directory(
        tmp_path, labels=None, image_size=(4, 5), interpolation=interpolation, verbose=False
    )[0]
    expected = mk.ops.image.resize(pixels.astype("float32")[None], (4, 5), interpolation)
    np.testing.assert_allclose(images, expected.numpy(), rtol=1e-6)


def test_jpeg_gif_and_batch_size_none(tmp_path):
    _save(tmp_path / "a" / "x", _grey(128), suffix=".jpg")
    _save(tmp_path / "b" / "y", _grey(60), suffix=".gif")
    dataset = mk.utils.image_dataset_from_directory(
        tmp_path, batch_size=None, image_size=(5, 5), shuffle=False, verbose=False
    )
    (image_a, label_a), (image_b, label_b) = list(dataset)
    assert image_a.shape == (5, 5, 3) and label_a.shape == () and int(label_b) == 1
    np.testing.assert_allclose(image_a, 128, atol=2)  # JPEG is lossy
    np.testing.assert_array_equal(image_b, 60)
    assert len(dataset) == 2


def test_class_names_choose_and_order_the_classes(tree):
    dataset = mk.utils.image_dataset_from_directory(
        tree, class_names=["dog", "cat"], image_size=(2, 2), shuffle=False, verbose=False
    )
    images, labels = _read(dataset)
    np.testing.assert_array_equal(images[:, 0, 0, 0], [200, 210, 10, 20, 30])
    np.testing.assert_array_equal(labels, [0, 0, 1, 1, 1])
    only = mk.utils.image_dataset_from_directory(
        tree, class_names=["dog"], image_size=(2, 2), verbose=False, seed=1
    )
    assert only.class_names == ["dog"] and sorted(only.file_paths) == _sorted_paths(tree)[3:]


def test_explicit_labels_follow_the_sorted_paths(tmp_path):
    for name, value in (("b", 20), ("a", 10), ("c", 30)):
        _save(tmp_path / name, _grey(value))
    dataset = mk.utils.image_dataset_from_directory(
        tmp_path, labels=[2, 0, 2], image_size=(1, 1), shuffle=False, verbose=False
    )
    images, labels = dataset[0]
    np.testing.assert_array_equal(images[:, 0, 0, 0], [10, 20, 30])
    np.testing.assert_array_equal(labels, [2, 0, 2])
    assert dataset.class_names == ["0", "2"]
    with pytest.raises(ValueError, match=r"label_mode='categorical', labels must be in \[0, 2\)"):
        mk.utils.image_dataset_from_directory(
            tmp_path, labels=[2, 0, 2], label_mode="categorical", verbose=False, seed=0
        )


def test_shuffle_is_keras_order_and_labels_follow_their_images(tree):
    seed = 7
    dataset = mk.utils.image_dataset_from_directory(
        tree, image_size=(2, 2), batch_size=2, seed=seed, verbose=False
    )
    expected = _sorted_paths(tree)
    np.random.RandomState(seed).shuffle(expected)  # how Keras orders the files
    assert dataset.file_paths == expected
    level_class = {10: 0, 20: 0, 30: 0, 200: 1, 210: 1}
    orders = []
    for _ in range(3):
        images, labels = _read(dataset)
        assert [level_class[int(v)] for v in images[:, 0, 0, 0]] == labels.tolist()
        orders.append(images[:, 0, 0, 0].tolist())
        dataset.on_epoch_end()
    assert all(sorted(order) == [10, 20, 30, 200, 210] for order in orders)
    assert len({tuple(order) for order in orders}) > 1  # a new order at each epoch
    again = mk.utils.image_dataset_from_directory(
        tree, image_size=(2, 2), batch_size=2, seed=seed, verbose=False
    )
    assert _read(again)[0][:, 0, 0, 0].tolist() == orders[0]


def test_validation_split_subsets(tree, capsys):
    kwargs = {"image_size": (2, 2), "validation_split": 0.4, "seed": 3}
    training = mk.utils.image_dataset_from_directory(tree, subset="training", **kwargs)
    validation = mk.utils.image_dataset_from_directory(tree, subset="validation", **kwargs)
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "Using 3 files for training." and out[3] == "Using 2 files for validation."
    assert not set(training.file_paths) & set(validation.file_paths)
    assert sorted(training.file_paths + validation.file_paths) == _sorted_paths(tree)
    both = mk.utils.image_dataset_from_directory(tree, subset="both", verbose=False, **kwargs)
    assert isinstance(both, tuple) and len(both) == 2
    assert both[0].file_paths == training.file_paths
    assert both[1].file_paths == validation.file_paths
    paths = list(validation.file_paths)
    images, _ = both[1][0]  # "both"'s validation part is not shuffled
    level = {p: int(Image.open(p).getpixel((0, 0))[0]) for p in paths}
    assert images[:, 0, 0, 0].tolist() == [level[p] for p in paths]


def test_fit_evaluate_and_predict_read_the_dataset(tree):
    mk.utils.set_random_seed(0)
    dataset = mk.utils.image_dataset_from_directory(
        tree, image_size=(4, 4), batch_size=2, seed=1, verbose=False
    )
    model = mk.Sequential(
        [
            mk.Input((4, 4, 3)),
            mk.layers.Rescaling(1 / 255),
            mk.layers.Flatten(),
            mk.layers.Dense(2),
        ]  # fmt: skip
    )
    model.compile(mk.optimizers.SGD(0.5), mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(dataset, epochs=20, verbose=0)
    assert history.params["steps"] == 3 and len(history.history["loss"]) == 20
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert np.isfinite(model.evaluate(dataset, verbose=0))
    training, validation = mk.utils.image_dataset_from_directory(
        tree, image_size=(4, 4), validation_split=0.4, subset="both", seed=1, verbose=False
    )
    history = model.fit(training, validation_data=validation, epochs=2, verbose=0)
    assert len(history.history["val_loss"]) == 2
    unlabelled = mk.utils.image_dataset_from_directory(
        tree, label_mode=None, image_size=(4, 4), shuffle=False, verbose=False
    )
    assert model.predict(unlabelled, verbose=0).shape == (7, 2)


def test_take(tree):
    dataset = mk.utils.image_dataset_from_directory(
        tree, image_size=(2, 2), batch_size=2, shuffle=False, verbose=False
    )
    taken = dataset.take(1)
    assert len(taken) == 1 and taken.class_names == ["cat", "dog"]
    np.testing.assert_array_equal(taken[0][1], dataset[0][1])
    assert len(dataset.take(-1)) == 3


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"label_mode": "sparse"}, "label_mode"),
        ({"labels": "folders"}, "labels"),
        ({"labels": [0, 1], "class_names": ["a"]}, "class_names"),
        ({"class_names": ["cat", "bird"]}, "class_names"),
        ({"label_mode": "binary", "class_names": ["cat"]}, "label_mode='binary'"),
        ({"labels": [0, 1]}, "one label per file"),
        ({"color_mode": "hsv"}, "color_mode"),
        ({"image_size": (4,)}, "image_size"),
        ({"image_size": (4, 0)}, "image_size"),
        ({"interpolation": "area"}, "interpolation"),
        ({"crop_to_aspect_ratio": True, "pad_to_aspect_ratio": True}, "pad_to_aspect_ratio"),
        ({"subset": "test", "validation_split": 0.2, "seed": 1}, "subset"),
        ({"subset": "training"}, "validation_split"),
        ({"validation_split": 0.2, "subset": "training"}, "seed"),
        ({"validation_split": 1.5, "subset": "training", "seed": 1}, "validation_split"),
        ({"format": "torch"}, "format"),
        ({"data_format": "nhwc"}, "data_format"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_arguments_raise_naming_them(tree, kwargs, words):
    with pytest.raises((ValueError, TypeError), match=WHERE) as error:
        mk.utils.image_dataset_from_directory(tree, verbose=False, **kwargs)
    assert words in str(error.value)


def test_no_files_or_no_directory(tmp_path):
    (tmp_path / "empty" / "a").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"no files found .*\.png"):
        mk.utils.image_dataset_from_directory(tmp_path / "empty", verbose=False)
    with pytest.raises(ValueError, match="not an existing directory"):
        mk.utils.image_dataset_from_directory(tmp_path / "missing", verbose=False)


def test_missing_pillow_names_the_extra(tree, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "PIL", None)
    with pytest.raises(ImportError, match="the 'images' extra"):
        mk.utils.image_dataset_from_directory(tree, verbose=False)
    with pytest.raises(ImportError, match="the 'images' extra"):
        mk.utils.array_to_img(np.zeros((2, 2, 3)))


def test_follow_links_reads_linked_folders_only_when_asked(tree, tmp_path):
    _save(tmp_path / "elsewhere" / "g", _grey(40))
    os.symlink(tmp_path / "elsewhere", tree / "cat" / "linked")
    counts = [
        len(
            mk.utils.image_dataset_from_directory(
                tree, follow_links=follow, image_size=(2, 2), verbose=False, seed=0
            ).file_paths
        )
        for follow in (False, True)
    ]
    assert counts == [5, 6]

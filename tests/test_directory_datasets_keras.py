"""The `*_dataset_from_directory` functions against Keras's own file index, split and image loader.

Keras's `image_dataset_from_directory` builds a `tf.data.Dataset` and needs
TensorFlow; the parts it is made of do not: `dataset_utils.index_directory`
(the files, their labels and classes, Keras's shuffle),
`get_training_or_validation_split`, and the Pillow loader behind
`format="grain"` (`_load_image_grain`, decode and `ops.image.resize`). These
tests run them on the same trees as minikeras and skip without Keras.
"""

import os

import numpy as np
import pytest

import minikeras as mk

Image = pytest.importorskip("PIL.Image")
keras = pytest.importorskip("keras")
dataset_utils = pytest.importorskip("keras.src.utils.dataset_utils")
image_dataset_utils = pytest.importorskip("keras.src.utils.image_dataset_utils")

IMAGE_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
RNG = np.random.default_rng(1)


@pytest.fixture
def tree(tmp_path):
    """Three classes with nested folders, odd sizes, upper-case suffixes and stray files."""
    root = tmp_path / "data"
    names = [
        "b/1.png", "b/10.png", "b/2.JPG", "b/z/0.png", "a/x.png", "a/x_y/1.png", "a/x/2.png",
        "c 2/q.bmp", "top.png", ".hidden/h.png",
    ]  # fmt: skip
    for index, name in enumerate(names):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        shape = (5 + index, 9 - index % 4, 3)
        pixels = RNG.integers(0, 256, shape, dtype="uint8")
        Image.fromarray(pixels).save(path, format="JPEG" if name.endswith("JPG") else None)
    (root / "b" / "notes.txt").write_text("no image")
    (tmp_path / "outside").mkdir()
    Image.fromarray(np.zeros((3, 3, 3), dtype="uint8")).save(tmp_path / "outside" / "o.png")
    os.symlink(tmp_path / "outside", root / "a" / "linked")  # read with follow_links only
    return root


@pytest.mark.parametrize("follow_links", [False, True])
@pytest.mark.parametrize("directory_suffix", ["", os.sep])
@pytest.mark.parametrize(
    "labels, class_names, shuffle, seed",
    [
        ("inferred", None, False, None),
        ("inferred", None, True, 11),
        ("inferred", ["c 2", "a"], True, 4),
        (None, None, False, None),
        (None, None, True, 123),
    ],
)
def test_file_order_labels_and_classes_match_keras(
    tree, directory_suffix, labels, class_names, shuffle, seed, follow_links
):
    directory = str(tree) + directory_suffix
    paths, keras_labels, keras_classes = dataset_utils.index_directory(
        directory, labels, IMAGE_FORMATS, class_names=class_names, shuffle=shuffle, seed=seed,
        follow_links=follow_links, verbose=False,
    )  # fmt: skip
    ours = mk.utils.image_dataset_from_directory(
        directory, labels=labels, class_names=class_names, shuffle=shuffle, seed=seed,
        image_size=(2, 2), batch_size=100, follow_links=follow_links, verbose=False,
    )  # fmt: skip
    assert ours.file_paths == paths
    assert ours.class_names == keras_classes
    if labels is not None:
        np.testing.assert_array_equal(ours.labels, keras_labels)


def test_explicit_labels_match_keras(tree):
    count = len(dataset_utils.index_directory(str(tree), None, IMAGE_FORMATS, shuffle=False)[0])
    given = [int(v) for v in RNG.integers(0, 3, count)]
    original = list(given)
    paths, labels, classes = dataset_utils.index_directory(  # Keras shuffles the list given
        str(tree), list(given), IMAGE_FORMATS, shuffle=True, seed=9, verbose=False
    )
    ours = mk.utils.image_dataset_from_directory(
        tree, labels=given, seed=9, image_size=(2, 2), verbose=False
    )
    assert ours.file_paths == paths and ours.class_names == classes
    np.testing.assert_array_equal(ours.labels, labels)
    assert given == original  # minikeras leaves the caller's list alone


@pytest.mark.parametrize("split", [0.2, 0.5, 0.75])
def test_validation_subsets_match_keras(tree, split):
    paths, labels, _ = dataset_utils.index_directory(
        str(tree), "inferred", IMAGE_FORMATS, shuffle=True, seed=2, verbose=False
    )
    kwargs = {"validation_split": split, "seed": 2, "image_size": (2, 2), "verbose": False}
    training, validation = mk.utils.image_dataset_from_directory(tree, subset="both", **kwargs)
    for subset, ours in (("training", training), ("validation", validation)):
        expected, expected_labels = dataset_utils.get_training_or_validation_split(
            paths, labels, split, subset
        )
        assert ours.file_paths == expected
        np.testing.assert_array_equal(ours.labels, expected_labels)


@pytest.mark.parametrize(
    "color_mode, channels, size, interpolation, crop, pad",
    [
        ("rgb", 3, (4, 6), "bilinear", False, False),
        ("grayscale", 1, (7, 3), "bilinear", False, False),
        ("rgba", 4, (5, 5), "nearest", False, False),
        ("rgb", 3, (3, 5), "bilinear", True, False),
        ("rgb", 3, (4, 4), "bilinear", False, True),
        ("grayscale", 1, (2, 7), "bilinear", False, True),
    ],
)
def test_images_match_keras_pillow_loader(
    tree, color_mode, channels, size, interpolation, crop, pad
):
    ours = mk.utils.image_dataset_from_directory(
        tree, color_mode=color_mode, image_size=size, interpolation=interpolation,
        crop_to_aspect_ratio=crop, pad_to_aspect_ratio=pad, shuffle=False, batch_size=None,
        verbose=False,
    )  # fmt: skip
    for path, (image, _) in zip(ours.file_paths[:2], ours):  # two: JAX compiles each shape
        theirs = image_dataset_utils._load_image_grain(
            path, size, channels, interpolation, "channels_last", crop, pad
        )
        np.testing.assert_allclose(image, np.asarray(theirs), rtol=1e-5, atol=1e-3)

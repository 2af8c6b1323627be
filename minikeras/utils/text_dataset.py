"""`text_dataset_from_directory`: a folder of `.txt` files (a subfolder per class) as batches."""

import numpy as np

from minikeras.argument_checks import check_int
from minikeras.utils.directory_index import check_arguments, index_directory, make_datasets

__all__ = ["text_dataset_from_directory"]

_WHERE = "text_dataset_from_directory"
TEXT_FORMATS = (".txt",)


def _text_loader(max_length):
    """A function from file paths to an object array of their texts (cut to `max_length`)."""

    def load(paths):
        texts = []
        for path in paths:
            with open(path, encoding="utf-8") as file:
                texts.append(file.read() if max_length is None else file.read(max_length))
        batch = np.empty(len(texts), dtype=object)
        batch[:] = texts
        return batch

    return load


def text_dataset_from_directory(
    directory,
    labels="inferred",
    label_mode="int",
    class_names=None,
    batch_size=32,
    max_length=None,
    shuffle=True,
    seed=None,
    validation_split=None,
    subset=None,
    follow_links=False,
    format="tf",
    verbose=True,
):
    """Reads a directory of `.txt` files (a subdirectory per class) as batches of `(texts, labels)`.

    With `labels="inferred"`, `directory/neg/*.txt` and `directory/pos/*.txt`
    give labels 0 and 1: the classes are the subdirectories in alphanumeric
    order (or `class_names`' order), and the files anywhere below one belong
    to it. Only files ending in `.txt` are read, as UTF-8.

    Keras returns a `tf.data.Dataset` of byte strings (or, with
    `format="grain"`, lists of Python strings); minikeras returns a
    `minikeras.utils.PyDataset` whose texts are numpy object arrays of
    Python strings (which `layers.TextVectorization` reads), with Keras's
    `class_names`, and `file_paths`, `take(n)` and `len` (in batches).
    `max_length` counts characters (as Keras's `format="grain"`; TensorFlow
    counts bytes). Shuffling, the validation split and the messages are as
    in `image_dataset_from_directory`.

    Args:
        directory: the directory (a path) to read.
        labels: `"inferred"` (from the subdirectories), None (texts only),
            or a list/tuple of int labels, one per file in the alphanumeric
            order of their paths.
        label_mode: `"int"` (int32 labels of shape `(batch,)`),
            `"categorical"` (float32 one-hot rows), `"binary"` (float32 0s
            and 1s of shape `(batch, 1)`, for two classes) or None (texts
            only).
        class_names: with `labels="inferred"`, the subdirectories to read,
            in the order of their labels; None reads all, alphanumerically.
        batch_size: the texts in a batch (the last may be smaller); None
            yields single texts, without a batch axis.
        max_length: None, or the int number of characters kept of each text.
        shuffle: whether to shuffle the files; False keeps them in
            alphanumeric order.
        seed: int seed for the shuffle; None draws one from the global
            generator (needed with `validation_split` and `shuffle`).
        validation_split: a float in (0, 1): the fraction of the files kept
            for validation (the last ones, after the shuffle).
        subset: with `validation_split`, `"training"`, `"validation"` or
            `"both"` (a `(training, validation)` tuple).
        follow_links: whether to read subdirectories that are symbolic links.
        format: Keras's choice of dataset, `"tf"` or `"grain"`; both give
            the same `PyDataset` here.
        verbose: whether to print how many files and classes were found.

    Returns:
        A `PyDataset` yielding `(texts, labels)`, or texts alone without
        labels; or, with `subset="both"`, a `(training, validation)` tuple of
        them (the validation one unshuffled).

    Raises:
        ValueError: if an argument is not one of its values (naming it), the
            directory does not exist or holds no `.txt` file, `class_names`
            are not its subdirectories, `labels` do not match the files in
            number, `label_mode="binary"` has other than two classes, or
            explicit labels are outside [0, number of classes) with
            `"categorical"` or `"binary"` (Keras encodes those silently).

    Example:
        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> for label, text in (("neg", "dull"), ("pos", "great"), ("pos", "fun")):
        ...     os.makedirs(os.path.join(folder, label), exist_ok=True)
        ...     with open(os.path.join(folder, label, text + ".txt"), "w") as file:
        ...         _ = file.write(text)
        >>> dataset = mk.utils.text_dataset_from_directory(folder, shuffle=False)
        Found 3 files belonging to 2 classes.
        >>> texts, labels = dataset[0]
        >>> texts.tolist(), labels.tolist(), dataset.class_names
        (['dull', 'fun', 'great'], [0, 1, 1], ['neg', 'pos'])
    """
    labels, label_mode, seed = check_arguments(
        _WHERE, labels, label_mode, class_names, validation_split, subset, shuffle, seed
    )
    check_int(_WHERE, "max_length", max_length, 0, allow_none=True)
    if format not in ("tf", "grain"):
        raise ValueError(f"{_WHERE}: format must be 'tf' or 'grain', got {format!r}")
    index = index_directory(
        _WHERE, directory, labels, TEXT_FORMATS, class_names, shuffle, seed, follow_links, verbose
    )
    return make_datasets(
        _WHERE, index, TEXT_FORMATS, label_mode, _text_loader(max_length), batch_size, shuffle,
        seed, validation_split, subset, verbose,
    )  # fmt: skip

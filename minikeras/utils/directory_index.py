"""What the `*_dataset_from_directory` functions share: the file index, the split, the batches.

Files are listed as Keras lists them: with `labels="inferred"`, each
subdirectory of `directory` (in alphanumeric order, or in `class_names`'
order) is a class and the files anywhere below it belong to it; otherwise
the whole tree is read. Inside a tree, folders come in the order of their
paths and files in alphanumeric order. With `shuffle`, the list is then
shuffled by `np.random.RandomState(seed)` as Keras shuffles it, so the same
seed gives Keras's `file_paths` and the same validation split.
"""

import os

import numpy as np

from minikeras.argument_checks import check_int
from minikeras.random import make_seed
from minikeras.utils.py_dataset import PyDataset

__all__ = ["DirectoryDataset", "check_arguments", "index_directory", "make_datasets"]

LABEL_MODES = ("int", "categorical", "binary", None)
SUBSETS = ("training", "validation", "both")


def check_arguments(
    where, labels, label_mode, class_names, validation_split, subset, shuffle, seed
):
    """Checks the arguments the directory readers share (before any file is read).

    Returns:
        `(labels, label_mode, seed)`: both None when either is (no labels),
        and an int seed (drawn from the global generator when None).
    """
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple, np.ndarray)):
            raise ValueError(
                f"{where}: labels must be 'inferred', None or a list/tuple of int labels (one "
                f"per file, in the files' alphanumeric order), got {labels!r}"
            )
        if class_names:
            raise ValueError(
                f"{where}: class_names can only be given with labels='inferred', got "
                f"class_names={class_names!r} with a list of labels"
            )
    if labels is None and class_names is not None:
        raise ValueError(f"{where}: class_names cannot be given with labels=None")
    if label_mode not in LABEL_MODES:
        raise ValueError(
            f"{where}: label_mode must be one of 'int', 'categorical', 'binary' or None, got "
            f"{label_mode!r}"
        )
    if validation_split and not (  # 0 and None both mean no split, as in Keras
        isinstance(validation_split, (int, float)) and 0 < validation_split < 1
    ):
        raise ValueError(
            f"{where}: validation_split must be a float between 0 and 1, got {validation_split!r}"
        )
    if subset not in (*SUBSETS, None):
        raise ValueError(
            f"{where}: subset must be 'training', 'validation', 'both' or None, got {subset!r}"
        )
    if bool(validation_split) != (subset is not None):
        raise ValueError(
            f"{where}: validation_split and subset go together (give both or neither), got "
            f"validation_split={validation_split!r} and subset={subset!r}"
        )
    if validation_split and shuffle and seed is None:
        raise ValueError(
            f"{where}: with validation_split and shuffle=True, give a seed, so that the "
            "training and validation subsets (made by two calls) do not overlap"
        )
    check_int(where, "seed", seed, 0, allow_none=True)
    if labels is None or label_mode is None:
        labels = label_mode = None
    return labels, label_mode, make_seed() % 1_000_000 if seed is None else seed


def _files_below(top, formats, follow_links):
    """The files below `top` with one of the `formats` (lower-case suffixes), in Keras's order."""
    walk = sorted(os.walk(top, followlinks=follow_links), key=lambda entry: entry[0])
    for root, _, names in walk:
        for name in sorted(names):
            if name.lower().endswith(formats):
                yield os.path.join(root, name)


def index_directory(
    where, directory, labels, formats, class_names, shuffle, seed, follow_links, verbose
):
    """The files of `directory`, their int labels and the class names, as Keras finds them.

    Returns:
        `(file_paths, labels, class_names)`: a list of paths, an int32 array
        of labels (None without labels) and a list of names (None without
        labels; the sorted labels as strings for a list of labels).
    """
    if not os.path.isdir(directory):
        raise ValueError(f"{where}: directory {str(directory)!r} is not an existing directory")
    if labels == "inferred":
        folders = [
            name
            for name in sorted(os.listdir(directory))
            if os.path.isdir(os.path.join(directory, name)) and not name.startswith(".")
        ]
        if class_names is not None:
            if not set(class_names) <= set(folders):
                raise ValueError(
                    f"{where}: class_names must name subdirectories of {str(directory)!r} "
                    f"({folders}, or some of them), got class_names={list(class_names)}"
                )
            folders = list(class_names)
    else:
        folders = [""]
    file_paths, file_labels = [], []
    for index, folder in enumerate(folders):
        top = os.path.join(directory, folder)
        for path in _files_below(top, formats, follow_links):
            file_paths.append(os.path.join(directory, folder, os.path.relpath(path, top)))
            file_labels.append(index)
    if labels == "inferred":
        labels, class_names = np.array(file_labels, dtype="int32"), folders
    elif labels is not None:
        if len(labels) != len(file_paths):
            raise ValueError(
                f"{where}: labels must have one label per file; got {len(labels)} labels and "
                f"{len(file_paths)} files in {str(directory)!r}"
            )
        class_names = [str(label) for label in sorted(set(labels))]
        labels = np.array(labels, dtype="int32")
    if verbose:
        classes = "" if labels is None else f" belonging to {len(class_names)} classes"
        print(f"Found {len(file_paths)} files{classes}.")
    if shuffle:  # two generators on one seed, as Keras: the same permutation of both
        np.random.RandomState(seed).shuffle(file_paths)
        if labels is not None:
            np.random.RandomState(seed).shuffle(labels)
    return file_paths, labels, class_names


def encode_labels(labels, label_mode, num_classes):
    """Int labels in `label_mode`'s encoding: int32 ints, float32 one-hot rows or (n, 1) floats."""
    if label_mode == "categorical":
        return np.eye(num_classes, dtype="float32")[labels]
    if label_mode == "binary":
        return labels.astype("float32")[:, None]
    return labels


class DirectoryDataset(PyDataset):
    """The batches of files the `*_dataset_from_directory` functions return (built there).

    A `PyDataset`: `fit`, `evaluate` and `predict` take it, `len` counts its
    batches and indexing or a `for` loop reads them, each a `(data, labels)`
    tuple (or `data` alone without labels). Files are read when their batch
    is. With a shuffle generator, the batches come in a new order after
    each `on_epoch_end` (which `fit` calls).

    Args:
        file_paths: the files, in the order they were indexed (Keras's
            order); kept as the attribute `file_paths`.
        labels: an array of the files' encoded labels, or None.
        class_names: the classes' names, label `i` being `class_names[i]`
            (None without labels); kept as the attribute `class_names`.
        load: a function from a list of paths to a batch array.
        batch_size: the files in a batch; None yields single samples.
        rng: a numpy `Generator` that shuffles the order, or None.

    Example:
        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> for label in ("no", "yes"):
        ...     os.makedirs(os.path.join(folder, label))
        ...     with open(os.path.join(folder, label, "note.txt"), "w") as file:
        ...         _ = file.write(label)
        >>> dataset = mk.utils.text_dataset_from_directory(folder, seed=1, verbose=False)
        >>> type(dataset).__name__, len(dataset), dataset.class_names
        ('DirectoryDataset', 1, ['no', 'yes'])
    """

    def __init__(self, file_paths, labels, class_names, load, batch_size, rng):
        super().__init__()
        self.file_paths, self.labels, self.class_names = file_paths, labels, class_names
        self.load, self.batch_size, self.rng = load, batch_size, rng
        self.order = np.arange(len(file_paths))
        if rng is not None:
            rng.shuffle(self.order)

    def __len__(self):
        return -(-len(self.order) // (self.batch_size or 1))

    def __getitem__(self, index):
        if not -len(self) <= index < len(self):
            raise IndexError(f"batch {index} of a dataset of {len(self)} batches")
        index %= len(self)
        size = self.batch_size or 1
        picked = self.order[index * size : (index + 1) * size]
        data = self.load([self.file_paths[i] for i in picked])
        labels = None if self.labels is None else self.labels[picked]
        if self.batch_size is None:  # one sample, no batch axis
            data = data[0]
            labels = None if labels is None else labels[0]
        return data if labels is None else (data, labels)

    def on_epoch_end(self):
        if self.rng is not None:  # a new order at each epoch, as tf.data's shuffle
            self.rng.shuffle(self.order)

    def take(self, count):
        """The first `count` batches, as a dataset of their own (tf.data's `take`).

        Args:
            count: int, how many batches; -1 (tf.data's "all") keeps them all.

        Returns:
            A dataset of the first `count` batches, in the current order.

        Raises:
            TypeError: if `count` is not an int.
            ValueError: if `count` is below -1.

        Example:
            >>> import os, tempfile
            >>> folder = tempfile.mkdtemp()
            >>> for name in ("a.txt", "b.txt", "c.txt"):
            ...     with open(os.path.join(folder, name), "w") as file:
            ...         _ = file.write(name)
            >>> texts = mk.utils.text_dataset_from_directory(
            ...     folder, labels=None, batch_size=2, shuffle=False, verbose=False
            ... )
            >>> [list(batch) for batch in texts.take(1)]
            [['a.txt', 'b.txt']]
        """
        check_int("take", "count", count, -1)
        taken = DirectoryDataset(
            self.file_paths, self.labels, self.class_names, self.load, self.batch_size, None
        )
        keep = len(self.order) if count == -1 else count * (self.batch_size or 1)
        taken.order = self.order[:keep].copy()
        return taken


def _subset(where, file_paths, labels, validation_split, subset, verbose):
    """The training or validation part of the files, as Keras cuts it (the last part validates)."""
    if not validation_split:
        return file_paths, labels
    validating = int(validation_split * len(file_paths))
    training = len(file_paths) - validating
    part = slice(0, training) if subset == "training" else slice(training, None)
    if verbose:
        print(f"Using {training if subset == 'training' else validating} files for {subset}.")
    return file_paths[part], None if labels is None else labels[part]


def make_datasets(
    where,
    index,
    formats,
    label_mode,
    load,
    batch_size,
    shuffle,
    seed,
    validation_split,
    subset,
    verbose,
):
    """The dataset (or the training and validation pair) of an `index_directory` result."""
    check_int(where, "batch_size", batch_size, 1, allow_none=True)
    file_paths, labels, class_names = index
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(
            f"{where}: label_mode='binary' needs exactly 2 classes, got class_names={class_names}"
        )
    if labels is not None:
        if (
            label_mode in ("categorical", "binary")
            and len(labels)
            and (labels.min() < 0 or labels.max() >= len(class_names))
        ):  # Keras would encode them silently as zero rows or as 5.0
            raise ValueError(
                f"{where}: with label_mode={label_mode!r}, labels must be in [0, "
                f"{len(class_names)}) (one per class among {class_names}), got labels from "
                f"{labels.min()} to {labels.max()}"
            )
        labels = encode_labels(labels, label_mode, len(class_names))
    datasets = []
    for part in ("training", "validation") if subset == "both" else (subset,):
        paths, part_labels = _subset(where, file_paths, labels, validation_split, part, verbose)
        if not paths:
            kind = f"{part} " if validation_split else ""
            raise ValueError(
                f"{where}: no {kind}files found in the directory (allowed formats: {formats})"
            )
        # as Keras, the validation part of subset="both" is not shuffled; a lone subset is
        shuffled = shuffle and not (subset == "both" and part == "validation")
        rng = np.random.default_rng(seed) if shuffled else None
        datasets.append(DirectoryDataset(paths, part_labels, class_names, load, batch_size, rng))
    return tuple(datasets) if subset == "both" else datasets[0]

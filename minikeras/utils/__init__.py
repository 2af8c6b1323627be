"""Helpers for users, as `keras.utils` has them.

Seeding (`set_random_seed`), a fresh session (`clear_session`), naming
(`to_snake_case`), labels and arrays (`to_categorical`, `normalize`),
sequences (`pad_sequences`), data (`split_dataset`, and `PyDataset` for data
read batch by batch) and a progress bar for hand-written loops (`Progbar`).

`keras.utils.plot_model` is left out: it needs pydot and the Graphviz
program, an outside binary minikeras does not depend on. `model.summary()`
prints the layer graph as text.
"""

from minikeras.utils.dataset_split import split_dataset
from minikeras.utils.naming import to_snake_case
from minikeras.utils.numerical import normalize, to_categorical
from minikeras.utils.progbar import Progbar
from minikeras.utils.py_dataset import PyDataset
from minikeras.utils.seeding import set_random_seed
from minikeras.utils.sequence import pad_sequences
from minikeras.utils.session import clear_session

__all__ = [
    "Progbar",
    "PyDataset",
    "clear_session",
    "normalize",
    "pad_sequences",
    "set_random_seed",
    "split_dataset",
    "to_categorical",
    "to_snake_case",
]

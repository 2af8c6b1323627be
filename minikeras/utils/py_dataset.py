"""`PyDataset`: a data set as a Python class, indexed by batch, as Keras 3's `utils.PyDataset`."""

__all__ = ["PyDataset"]


class PyDataset:
    """Base class for a data set read one batch at a time: subclass it and give it batches.

    A subclass defines `__len__` (the number of batches in an epoch) and
    `__getitem__(index)` (batch `index`: `(x,)`, `(x, y)` or `(x, y,
    sample_weight)`, or `x` alone for `predict`); `on_epoch_end` is called by
    `fit` after each epoch (to reshuffle, say). `fit`, `evaluate` and `predict`
    take one in place of arrays. Each batch is checked as it is read. A `for`
    loop reads the batches in order. `Sequence` is the same class under its
    older Keras name.

    Args:
        workers: accepted for Keras compatibility; batches are read in the
            calling thread here, one at a time.
        use_multiprocessing: likewise accepted, and unused.
        max_queue_size: likewise accepted, and unused.

    Example:
        >>> class Batches(mk.utils.PyDataset):
        ...     def __init__(self, x, y, batch_size):
        ...         super().__init__()
        ...         self.x, self.y, self.batch_size = x, y, batch_size
        ...     def __len__(self):
        ...         return -(-len(self.x) // self.batch_size)
        ...     def __getitem__(self, index):
        ...         part = slice(index * self.batch_size, (index + 1) * self.batch_size)
        ...         return self.x[part], self.y[part]
        >>> model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
        >>> model.compile("sgd", "mse")
        >>> history = model.fit(Batches(np.ones((10, 2)), np.ones((10, 1)), 4), verbose=0)
        >>> history.params["steps"]
        3
    """

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self.workers = workers
        self.use_multiprocessing = use_multiprocessing
        self.max_queue_size = max_queue_size

    def __len__(self):
        """The number of batches in an epoch; a subclass defines it.

        Raises:
            NotImplementedError: if the subclass does not define it.
        """
        raise NotImplementedError(f"{type(self).__name__} must define __len__")

    def __getitem__(self, index):
        """Batch `index`; a subclass defines it.

        Args:
            index: the batch's index, in `[0, len(self))`.

        Raises:
            NotImplementedError: if the subclass does not define it.
        """
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __iter__(self):
        """Yields the batches in order: `self[0]`, `self[1]`, ... up to `len(self)`.

        Example:
            >>> class Squares(mk.utils.PyDataset):
            ...     def __len__(self):
            ...         return 3
            ...     def __getitem__(self, index):
            ...         return index * index
            >>> list(Squares())
            [0, 1, 4]
        """
        for index in range(len(self)):
            yield self[index]

    def on_epoch_end(self):
        """Called by `fit` after each epoch; does nothing unless overridden.

        Returns:
            None.

        Example:
            >>> mk.utils.PyDataset().on_epoch_end()
        """

    @property
    def num_batches(self):
        """`len(self)`, as Keras's `num_batches`.

        Example:
            >>> class Two(mk.utils.PyDataset):
            ...     def __len__(self):
            ...         return 2
            >>> Two().num_batches
            2
        """
        return len(self)

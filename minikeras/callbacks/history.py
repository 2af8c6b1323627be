"""`History`: records the epoch logs `fit` returns."""

from minikeras.callbacks.base import Callback

__all__ = ["History"]


class History(Callback):
    """Records the epoch logs; `fit` returns it and sets it as `model.history`.

    Attributes:
        history: a dict mapping each log name to the list of its values.
        epoch: the list of epoch indices recorded.

    Both are emptied at the start of training.

    Example:
        >>> history = mk.callbacks.History()
        >>> history.on_train_begin()
        >>> history.on_epoch_end(0, {"loss": 0.5, "accuracy": 0.75})
        >>> history.history, history.epoch
        ({'loss': [0.5], 'accuracy': [0.75]}, [0])
    """

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.history = {}
        self.epoch = []
        if self.model is not None:
            self.model.history = self

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)

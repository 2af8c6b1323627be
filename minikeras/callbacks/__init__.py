"""Callbacks: code that `fit` runs at fixed points of training.

A callback subclasses `Callback` and overrides the hooks it needs. `fit`
wraps the list it is given in a `CallbackList`, which calls each hook on
every callback in order and appends a `History` last, so the history records
keys the other callbacks add to the logs (such as `"learning_rate"`).

What a callback may rely on (the contract with `minikeras.trainers`):

- `self.model`: the model being trained, with `stop_training` (set it to
  True to stop after the current batch or epoch), `optimizer.learning_rate`
  (a settable float), `get_weights()`, `set_weights(list)` and `name`;
- `self.params`: a dict with `epochs`, `steps` and `verbose`; `model` and
  `params` are set before `on_train_begin`;
- `logs`: a dict of Python floats, never None (`{}` where Keras has nothing
  to say: `on_train_begin`, `on_epoch_begin`, `on_*_batch_begin`, ...).
  Epoch logs hold the epoch's averages (`{"loss": 0.3, "val_loss": 0.4,
  ...}`); batch logs hold running averages.
  Epoch logs are shared: a key a callback adds is seen by the callbacks after it.

Names, arguments and defaults are Keras 3's. `ModelCheckpoint` saves with
`Model.save` / `save_weights` (see `minikeras.saving`); progress bars are
drawn by the trainer (so `ProgbarLogger` adds nothing to them).
"""

from minikeras.callbacks.backup import BackupAndRestore
from minikeras.callbacks.base import Callback
from minikeras.callbacks.callback_list import CallbackList
from minikeras.callbacks.checkpoint import ModelCheckpoint
from minikeras.callbacks.early_stopping import EarlyStopping
from minikeras.callbacks.ema_weights import SwapEMAWeights
from minikeras.callbacks.history import History
from minikeras.callbacks.learning_rate import LearningRateScheduler, ReduceLROnPlateau
from minikeras.callbacks.logging import CSVLogger, LambdaCallback, ProgbarLogger, TerminateOnNaN
from minikeras.callbacks.remote_monitor import RemoteMonitor
from minikeras.callbacks.tensorboard import TensorBoard

# In the order of the API reference.
__all__ = [
    "Callback",
    "CallbackList",
    "History",
    "EarlyStopping",
    "LearningRateScheduler",
    "ReduceLROnPlateau",
    "TerminateOnNaN",
    "CSVLogger",
    "LambdaCallback",
    "ProgbarLogger",
    "ModelCheckpoint",
    "SwapEMAWeights",
    "BackupAndRestore",
    "TensorBoard",
    "RemoteMonitor",
]

"""`TensorBoard`: the logs of training as scalar event files that TensorBoard reads.

The files are written by tensorboardX, the `tensorboard` extra
(`pip install minikeras[tensorboard]`); without it, training with this
callback stops at its start with an error that names the extra. Only
scalars are written: Keras's histograms, images, graphs, embeddings and
profiles need TensorFlow's tooling, and asking for them is refused.
"""

import numbers
import os
import time

from minikeras.callbacks.base import Callback

__all__ = ["TensorBoard"]


def _summary_writer(log_dir):
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        raise ImportError(
            "TensorBoard: writing event files needs tensorboardX, the 'tensorboard' extra: "
            "pip install minikeras[tensorboard] (or pip install tensorboardX)"
        ) from None
    return SummaryWriter(logdir=log_dir)


class TensorBoard(Callback):
    """Writes the loss and metrics of training to TensorBoard event files.

    As Keras does: the training logs go to `log_dir/train`, the validation
    logs (`val_...`, written without the prefix) to `log_dir/validation`,
    each as the scalar `epoch_<name>` at step `epoch`. With
    `update_freq="batch"` or an int `N`, the training logs of every (N-th)
    batch are also written as `batch_<name>` at the global batch count.
    View them with `tensorboard --logdir log_dir`.

    Args:
        log_dir: the directory of the event files.
        histogram_freq: must be 0 (weight histograms are not written here).
        write_graph: accepted; no graph is written (there is none to write:
            minikeras runs eagerly).
        write_images: must be False.
        write_steps_per_second: also write `epoch_steps_per_second`.
        update_freq: `"epoch"`, `"batch"`, or an int: write batch logs every
            that many batches.
        profile_batch: must be 0.
        embeddings_freq: must be 0.
        embeddings_metadata: must be None.

    Raises:
        ValueError: for a histogram, image, profile or embedding option, or a
            bad `update_freq`.
        ImportError: at the start of training, if tensorboardX is missing.

    Example:
        >>> import tempfile
        >>> mk.callbacks.TensorBoard(log_dir=tempfile.mkdtemp(), update_freq=10).update_freq
        10
    """

    def __init__(
        self,
        log_dir="logs",
        histogram_freq=0,
        write_graph=True,
        write_images=False,
        write_steps_per_second=False,
        update_freq="epoch",
        profile_batch=0,
        embeddings_freq=0,
        embeddings_metadata=None,
    ):
        super().__init__()
        unsupported = {
            "histogram_freq": (histogram_freq, 0),
            "write_images": (write_images, False),
            "profile_batch": (profile_batch, 0),
            "embeddings_freq": (embeddings_freq, 0),
            "embeddings_metadata": (embeddings_metadata, None),
        }
        for name, (value, default) in unsupported.items():
            if value != default:
                raise ValueError(
                    f"TensorBoard: {name}={value!r} is not supported: minikeras writes scalars "
                    f"only; leave {name} at {default!r}"
                )
        if update_freq not in ("epoch", "batch") and (
            isinstance(update_freq, bool)
            or not isinstance(update_freq, numbers.Integral)
            or update_freq < 1
        ):
            raise ValueError(
                f"TensorBoard: update_freq must be 'epoch', 'batch' or an int >= 1, "
                f"got {update_freq!r}"
            )
        self.log_dir = os.fspath(log_dir)
        self.write_graph = write_graph
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self._writers = {}
        self._global_batch = 0
        self._epoch_start = None
        self._epoch_batches = 0

    def _writer(self, name):
        if name not in self._writers:
            self._writers[name] = _summary_writer(os.path.join(self.log_dir, name))
        return self._writers[name]

    def on_train_begin(self, logs=None):
        self._close()
        self._writer("train")  # fails now, not after an epoch, without the extra
        self._global_batch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start, self._epoch_batches = time.perf_counter(), 0

    def on_train_batch_end(self, batch, logs=None):
        self._global_batch += 1
        self._epoch_batches += 1
        if self.update_freq == "epoch" or self._global_batch % self.update_freq:
            return
        writer = self._writer("train")
        for name, value in (logs or {}).items():
            if isinstance(value, numbers.Real):
                writer.add_scalar(f"batch_{name}", float(value), self._global_batch)

    def on_epoch_end(self, epoch, logs=None):
        train, validation = {}, {}
        for name, value in (logs or {}).items():
            if not isinstance(value, numbers.Real):
                continue
            if name.startswith("val_"):
                validation[name[4:]] = float(value)
            else:
                train[name] = float(value)
        if self.write_steps_per_second and self._epoch_start is not None:
            seconds = time.perf_counter() - self._epoch_start
            train["steps_per_second"] = self._epoch_batches / max(seconds, 1e-12)
        for writer_name, values in (("train", train), ("validation", validation)):
            if values:
                writer = self._writer(writer_name)
                for name, value in values.items():
                    writer.add_scalar(f"epoch_{name}", value, epoch)
                writer.flush()

    def on_train_end(self, logs=None):
        self._close()

    def _close(self):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

"""The `Callback` base class: the hooks `fit`, `evaluate` and `predict` call."""

__all__ = ["Callback"]

# Names of the hooks, in the order of Keras's `Callback`; LambdaCallback accepts these.
_HOOKS = (
    "on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
    "on_train_batch_begin", "on_train_batch_end", "on_test_begin", "on_test_end",
    "on_test_batch_begin", "on_test_batch_end", "on_predict_begin", "on_predict_end",
    "on_predict_batch_begin", "on_predict_batch_end", "on_batch_begin", "on_batch_end",
)  # fmt: skip


class Callback:
    """Base class of callbacks: every hook is a no-op until overridden.

    `fit` calls the `on_train_*`, `on_epoch_*` and `on_batch_*` hooks, and the
    `on_test_*` hooks while it validates; `evaluate` calls the `on_test_*`
    hooks and `predict` the `on_predict_*` hooks, as in Keras.

    Attributes:
        model: the model being trained, set by `set_model`.
        params: a dict with `epochs`, `steps` and `verbose`, set by `set_params`.

    Example:
        >>> class CountEpochs(mk.callbacks.Callback):
        ...     def on_train_begin(self, logs=None):
        ...         self.count = 0
        ...     def on_epoch_end(self, epoch, logs=None):
        ...         self.count += 1
        >>> counter = CountEpochs()
        >>> counter.on_train_begin(); counter.on_epoch_end(0); counter.count
        1
    """

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        """Sets `self.model`, the model being trained; `fit` calls it first.

        Args:
            model: the model.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> callback = mk.callbacks.Callback()
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0, callbacks=[callback])
            >>> callback.model is model
            True
        """
        self.model = model

    def set_params(self, params):
        """Sets `self.params`; `fit` calls it before training.

        Args:
            params: a dict with `epochs`, `steps` (batches per epoch) and `verbose`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> callback = mk.callbacks.Callback()
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0,
            ...               callbacks=[callback])
            >>> callback.params
            {'epochs': 2, 'steps': 1, 'verbose': 0}
        """
        self.params = params

    def on_train_begin(self, logs=None):
        """Called once at the start of `fit`, before the first epoch.

        Args:
            logs: `{}` (Keras has nothing to report yet).

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Announce(mk.callbacks.Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print("training for", self.params["epochs"], "epochs")
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=3, verbose=0,
            ...               callbacks=[Announce()])
            training for 3 epochs
        """

    def on_train_end(self, logs=None):
        """Called once at the end of `fit`, also when training stopped early.

        Args:
            logs: the last epoch's logs (`{}` if no epoch ran).

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Done(mk.callbacks.Callback):
            ...     def on_train_end(self, logs=None):
            ...         print("done:", sorted(logs))
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0, callbacks=[Done()])
            done: ['loss']
        """

    def on_epoch_begin(self, epoch, logs=None):
        """Called at the start of each epoch of `fit`.

        Args:
            epoch: the epoch's index, counted from 0.
            logs: `{}`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Epochs(mk.callbacks.Callback):
            ...     def on_epoch_begin(self, epoch, logs=None):
            ...         print("epoch", epoch)
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0,
            ...               callbacks=[Epochs()])
            epoch 0
            epoch 1
        """

    def on_epoch_end(self, epoch, logs=None):
        """Called at the end of each epoch of `fit`, after validation.

        Args:
            epoch: the epoch's index, counted from 0.
            logs: a dict of floats: the epoch's mean loss and metrics, and
                with validation data the same prefixed `val_`. A key a callback
                adds is seen by the callbacks after it, and by `History`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Keys(mk.callbacks.Callback):
            ...     def on_epoch_end(self, epoch, logs=None):
            ...         print(epoch, sorted(logs))
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), validation_split=0.5,
            ...               verbose=0, callbacks=[Keys()])
            0 ['loss', 'val_loss']
        """

    def on_train_batch_begin(self, batch, logs=None):
        """Called before each training step; by default it calls `on_batch_begin`.

        Args:
            batch: the step's index, counted from 0 in each epoch.
            logs: `{}`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Steps(mk.callbacks.Callback):
            ...     def on_train_batch_begin(self, batch, logs=None):
            ...         print("step", batch)
            >>> _ = model.fit(np.ones((10, 2)), np.ones((10, 1)), batch_size=4, verbose=0,
            ...               callbacks=[Steps()])
            step 0
            step 1
            step 2
        """
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        """Called after each training step; by default it calls `on_batch_end`.

        Args:
            batch: the step's index, counted from 0 in each epoch.
            logs: a dict of floats: the running means of the loss and metrics
                over the epoch's steps so far.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Losses(mk.callbacks.Callback):
            ...     def on_train_batch_end(self, batch, logs=None):
            ...         print(batch, sorted(logs))
            >>> _ = model.fit(np.ones((8, 2)), np.ones((8, 1)), batch_size=4, verbose=0,
            ...               callbacks=[Losses()])
            0 ['loss']
            1 ['loss']
        """
        self.on_batch_end(batch, logs=logs)

    def on_batch_begin(self, batch, logs=None):
        """Keras's older name for `on_train_batch_begin`, which calls it.

        Args:
            batch: the step's index, counted from 0 in each epoch.
            logs: `{}`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Steps(mk.callbacks.Callback):
            ...     def on_batch_begin(self, batch, logs=None):
            ...         print("step", batch)
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0, callbacks=[Steps()])
            step 0
        """

    def on_batch_end(self, batch, logs=None):
        """Keras's older name for `on_train_batch_end`, which calls it.

        Args:
            batch: the step's index, counted from 0 in each epoch.
            logs: the running means of the loss and metrics, as for `on_train_batch_end`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Steps(mk.callbacks.Callback):
            ...     def on_batch_end(self, batch, logs=None):
            ...         print("step", batch, sorted(logs))
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0, callbacks=[Steps()])
            step 0 ['loss']
        """

    def on_test_begin(self, logs=None):
        """Called when an evaluation starts (`evaluate`, or validation in `fit`).

        Args:
            logs: `{}`.

        Example:
            >>> from minikeras.callbacks import CallbackList
            >>> class Log(mk.callbacks.Callback):
            ...     def on_test_begin(self, logs=None):
            ...         print("on_test_begin")
            >>> CallbackList([Log()]).on_test_begin()
            on_test_begin
        """

    def on_test_end(self, logs=None):
        """Called at the end of an evaluation, with its logs.

        Args:
            logs: the evaluation's loss and metrics (unprefixed, also when `fit` validates).

        Example:
            >>> from minikeras.callbacks import CallbackList
            >>> class Log(mk.callbacks.Callback):
            ...     def on_test_end(self, logs=None):
            ...         print("on_test_end")
            >>> CallbackList([Log()]).on_test_end()
            on_test_end
        """

    def on_test_batch_begin(self, batch, logs=None):
        """Called before each evaluation batch.

        Args:
            batch: the batch's index, counted from 0.
            logs: `{}`.

        Example:
            >>> from minikeras.callbacks import CallbackList
            >>> class Log(mk.callbacks.Callback):
            ...     def on_test_batch_begin(self, batch, logs=None):
            ...         print("on_test_batch_begin", batch)
            >>> CallbackList([Log()]).on_test_batch_begin(0)
            on_test_batch_begin 0
        """

    def on_test_batch_end(self, batch, logs=None):
        """Called after each evaluation batch, with the running logs.

        Args:
            batch: the batch's index, counted from 0.
            logs: the running means of the loss and metrics so far.

        Example:
            >>> from minikeras.callbacks import CallbackList
            >>> class Log(mk.callbacks.Callback):
            ...     def on_test_batch_end(self, batch, logs=None):
            ...         print("on_test_batch_end", batch)
            >>> CallbackList([Log()]).on_test_batch_end(0)
            on_test_batch_end 0
        """

    def on_predict_begin(self, logs=None):
        """Called when `predict` starts.

        Args:
            logs: `{}`.

        Example:
            >>> from minikeras.callbacks import CallbackList
            >>> class Log(mk.callbacks.Callback):
            ...     def on_predict_begin(self, logs=None):
            ...         print("on_predict_begin")
            >>> CallbackList([Log()]).on_predict_begin()
            on_predict_begin
        """

    def on_predict_end(self, logs=None):
        """Called when `predict` ends.

        Args:
            logs: `{}`.

        Example:
            >>> from minikeras.callbacks import CallbackList
            >>> class Log(mk.callbacks.Callback):
            ...     def on_predict_end(self, logs=None):
            ...         print("on_predict_end")
            >>> CallbackList([Log()]).on_predict_end()
            on_predict_end
        """

    def on_predict_batch_begin(self, batch, logs=None):
        """Called before each `predict` batch.

        Args:
            batch: the batch's index, counted from 0.
            logs: `{}`.

        Example:
            >>> from minikeras.callbacks import CallbackList
            >>> class Log(mk.callbacks.Callback):
            ...     def on_predict_batch_begin(self, batch, logs=None):
            ...         print("on_predict_batch_begin", batch)
            >>> CallbackList([Log()]).on_predict_batch_begin(0)
            on_predict_batch_begin 0
        """

    def on_predict_batch_end(self, batch, logs=None):
        """Called after each `predict` batch; `logs["outputs"]` holds its outputs.

        Args:
            batch: the batch's index, counted from 0.
            logs: `{"outputs": the batch's predictions}`.

        Example:
            >>> from minikeras.callbacks import CallbackList
            >>> class Log(mk.callbacks.Callback):
            ...     def on_predict_batch_end(self, batch, logs=None):
            ...         print("on_predict_batch_end", batch)
            >>> CallbackList([Log()]).on_predict_batch_end(0)
            on_predict_batch_end 0
        """

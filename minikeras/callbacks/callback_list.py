"""`CallbackList`: calls every hook on each callback of a list, in order, with a `History` last."""

from minikeras.callbacks.base import Callback
from minikeras.callbacks.history import History
from minikeras.callbacks.logging import ProgbarLogger

__all__ = ["CallbackList"]


class CallbackList(Callback):
    """Calls every hook on each of its callbacks, in order.

    With `add_history=True` a `History` is appended, unless one was given; it
    stays last (`append` inserts before it), so it records the keys other
    callbacks add to the epoch logs. A batch-level hook goes only to the
    callbacks that define it (or, for training batches, Keras's older
    `on_batch_begin` / `on_batch_end`): at every step of a small model the
    calls of empty hooks cost ~2% of `fit`. Which callbacks define one is
    found again at each train, test, predict or epoch begin and whenever
    the list's entries change; a hook first set on a callback mid-epoch is
    called from the next of those on (Keras 3 calls every callback's hook).

    Args:
        callbacks: a list of `Callback`s, or None.
        add_history: whether to add a `History` if none is present.
        add_progbar: whether to add a `ProgbarLogger` if none is present
            (before the `History`; Keras appends it after).
        model: the model to give every callback, or None.
        **params: `epochs`, `steps`, `verbose`, given to every callback.

    Raises:
        TypeError: if an entry is not a `Callback`.

    Example:
        >>> callbacks = mk.callbacks.CallbackList([], add_history=True, epochs=2)
        >>> callbacks.on_train_begin()
        >>> callbacks.on_epoch_end(0, {"loss": 0.5}); callbacks.on_epoch_end(1, {"loss": 0.25})
        >>> callbacks.history.history, callbacks.history.params
        ({'loss': [0.5, 0.25]}, {'epochs': 2})
    """

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        self.callbacks = []
        self._history = None
        self._history_added = False
        self._batch_methods = {}  # hook -> (the callbacks then, those defining the hook)
        for callback in callbacks or []:
            self.append(callback)
        if add_progbar and not any(isinstance(c, ProgbarLogger) for c in self.callbacks):
            self.append(ProgbarLogger())
        if add_history and self._history is None:
            self._history = History()
            self._history_added = True
            self.callbacks.append(self._history)
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    @property
    def history(self):
        """The `History` among the callbacks, or None."""
        return self._history

    def append(self, callback):
        """Adds a callback (before a `History` this list added itself).

        Args:
            callback: a `Callback`.

        Returns:
            None.

        Raises:
            TypeError: if `callback` is not a `Callback`.

        Example:
            >>> from minikeras.callbacks import TerminateOnNaN
            >>> callbacks = mk.callbacks.CallbackList(add_history=True)
            >>> callbacks.append(TerminateOnNaN())
            >>> [type(c).__name__ for c in callbacks.callbacks]
            ['TerminateOnNaN', 'History']
        """
        if not isinstance(callback, Callback):
            raise TypeError(
                f"CallbackList: expected a minikeras.callbacks.Callback, got {callback!r} "
                f"of type {type(callback).__name__}"
            )
        if isinstance(callback, History) and self._history is None:
            self._history = callback
        if self._history_added:
            self.callbacks.insert(len(self.callbacks) - 1, callback)
        else:
            self.callbacks.append(callback)
        self._batch_methods = {}
        if self.model is not None:
            callback.set_model(self.model)
        if self.params:
            callback.set_params(self.params)

    def set_model(self, model):
        """Gives `model` to every callback and sets `model.history` (as Keras does)."""
        super().set_model(model)
        if self._history is not None:
            model.history = self._history
        for callback in self.callbacks:
            callback.set_model(model)

    def set_params(self, params):
        """Gives `params` to every callback."""
        super().set_params(params)
        for callback in self.callbacks:
            callback.set_params(params)

    def _call(self, hook, *args):
        if args[-1] is None:  # every hook gets a logs dict, as in Keras
            args = args[:-1] + ({},)
        for callback in self.callbacks:
            getattr(callback, hook)(*args)

    def _call_batch(self, hook, batch, logs):
        methods = self._batch_methods.get(hook)
        # (`callbacks` is a plain list a user may change: its entries, not its length,
        # key the cache; an unchanged list compares by identity, running no `__eq__`)
        if methods is None or methods[0] != self.callbacks:
            methods = self._batch_methods[hook] = (list(self.callbacks), _defining(self, hook))
        if methods[1]:
            logs = {} if logs is None else logs
            for callback in methods[1]:  # (looked up now: a hook replaced since counts)
                getattr(callback, hook)(batch, logs)

    def reads_train_batches(self):
        """Whether a callback defines `on_train_batch_begin` or `on_train_batch_end`.

        Asked by `fit` at each epoch's start: in an epoch where no callback
        (and no progress bar) reads a batch, the default step makes no logs
        per batch (see `trainers.fit_loop`).

        Returns:
            A bool.

        Example:
            >>> mk.callbacks.CallbackList([mk.callbacks.History()]).reads_train_batches()
            False
        """
        return bool(
            _defining(self, "on_train_batch_begin") or _defining(self, "on_train_batch_end")
        )

    def on_train_begin(self, logs=None):
        self._batch_methods = {}  # (a hook set on a callback since is found again)
        self._call("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._batch_methods = {}  # (a hook set on a callback since is found again)
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", epoch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call_batch("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call_batch("on_train_batch_end", batch, logs)

    def on_test_begin(self, logs=None):
        self._batch_methods = {}  # (a hook set on a callback since is found again)
        self._call("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._call("on_test_end", logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call_batch("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call_batch("on_test_batch_end", batch, logs)

    def on_predict_begin(self, logs=None):
        self._batch_methods = {}  # (a hook set on a callback since is found again)
        self._call("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._call("on_predict_end", logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call_batch("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call_batch("on_predict_batch_end", batch, logs)


# A training batch's hook calls its older name by default (see `Callback`).
_ALIASES = {"on_train_batch_begin": "on_batch_begin", "on_train_batch_end": "on_batch_end"}


def _defining(callback_list, hook):
    """The callbacks that define `hook` or its older name, in order.

    Asked of the callback itself, as Keras does: a hook set on the instance,
    or made by its `__getattribute__`, counts as defined.
    """
    names = (hook, _ALIASES[hook]) if hook in _ALIASES else (hook,)
    return [
        callback
        for callback in callback_list.callbacks
        if any(
            getattr(getattr(callback, name), "__func__", None) is not getattr(Callback, name)
            for name in names
        )
    ]

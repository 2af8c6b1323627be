"""`SwapEMAWeights`: evaluate (and optionally checkpoint) with the weights' moving averages."""

from minikeras.callbacks.base import Callback

__all__ = ["SwapEMAWeights"]


class SwapEMAWeights(Callback):
    """Puts the optimizer's moving averages in the model while it is evaluated or predicts.

    For an optimizer made with `use_ema=True`: the model's weights are set
    to their averages at `on_test_begin` / `on_predict_begin` and set back at
    the matching end, so that validation in `fit`, `evaluate` and `predict`
    see the averaged weights while training goes on with the raw ones. (Keras
    swaps the two, putting the raw weights in the optimizer's averages for a
    while; minikeras keeps them aside, so the optimizer's state, and what a
    checkpoint saves of it, stays right.) With `swap_on_epoch=True` the
    averages are also in the model from each epoch's end to the next epoch's
    start, where callbacks listed after this one (a `ModelCheckpoint`) see
    them. At the end of `fit` the model holds the averages either way (`fit`
    calls `finalize_variable_values`).

    Args:
        swap_on_epoch: whether to swap at each epoch's end and back at the
            next epoch's start.

    Raises:
        ValueError: (when used) if the model's optimizer has `use_ema=False`,
            or is not built yet (no training step has made its averages), as
            Keras's raises. (Keras's `evaluate` builds the optimizer first,
            so there it swaps in the averages' initial zeros instead.)

    Example:
        >>> model = mk.Sequential([mk.Input((1,)), mk.layers.Dense(1, kernel_initializer="zeros")])
        >>> model.compile(mk.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.5), loss="mse")
        >>> x, y = np.ones((4, 1), "float32"), np.ones((4, 1), "float32")
        >>> _ = model.fit(x, y, batch_size=4, epochs=2, verbose=0)
        >>> with_ema = mk.callbacks.SwapEMAWeights()
        >>> # After fit the model holds the averages, so the two agree.
        >>> model.evaluate(x, y, verbose=0) == model.evaluate(x, y, verbose=0, callbacks=[with_ema])
        True
    """

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        self.swap_on_epoch = bool(swap_on_epoch)
        self._raw_weights = None  # the model's own weights while the averages stand in

    def _put_averages_in(self):
        if self._raw_weights is not None:
            return
        optimizer = getattr(self.model, "optimizer", None)
        if not getattr(optimizer, "use_ema", False):
            raise ValueError(
                "SwapEMAWeights: the model's optimizer must be made with use_ema=True; got "
                f"use_ema={getattr(optimizer, 'use_ema', None)} on {type(optimizer).__name__}"
            )
        if not optimizer.built:
            raise ValueError(
                "SwapEMAWeights: the model's optimizer has no moving averages yet "
                f"({type(optimizer).__name__} makes them when it is built, at the first "
                "training step): train the model before evaluating or predicting with "
                "SwapEMAWeights"
            )
        variables = optimizer._trainable_variables
        self._raw_weights = [variable.numpy() for variable in variables]
        for variable, average in zip(variables, optimizer._averages):
            variable.assign(average.numpy())

    def _take_averages_out(self):
        if self._raw_weights is None:
            return
        for variable, weights in zip(self.model.optimizer._trainable_variables, self._raw_weights):
            variable.assign(weights)
        self._raw_weights = None

    def on_epoch_begin(self, epoch, logs=None):
        self._take_averages_out()

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch:
            self._put_averages_in()

    def on_train_end(self, logs=None):
        # fit has set the weights to the averages by now (finalize_variable_values).
        self._raw_weights = None

    def on_test_begin(self, logs=None):
        self._put_averages_in()

    def on_test_end(self, logs=None):
        self._take_averages_out()

    def on_predict_begin(self, logs=None):
        self._put_averages_in()

    def on_predict_end(self, logs=None):
        self._take_averages_out()

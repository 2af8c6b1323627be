"""What a layer adds to the training loss: `add_loss`, regularizers, and `losses`.

A mixin of `Layer`. Losses given to `add_loss()` inside `call()` count for the
outermost call they were added in (Keras's "cleared at the start of each
outermost call"); callables given outside `call()` are kept and evaluated
whenever `losses` is read; every tracked weight's regularizer adds its penalty.
"""

import numpy as np

from minikeras import ops
from minikeras.engine.context import state as _state
from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import TrackingGeneration
from minikeras.layers import call_checks, tracking

__all__ = ["LayerLosses", "activity_loss"]


def activity_loss(regularizer, output):
    """The penalty an activity regularizer adds for one output: divided by the batch size.

    As Keras 3 (since 3.14): the regularizer's value on `output`, divided by
    the size of its first axis, so that the penalty's weight in the loss does
    not grow with the batch; 0 for an empty batch. A scalar output is not
    divided.

    Args:
        regularizer: a callable of a Tensor, returning a scalar Tensor.
        output: the Tensor the layer returned.

    Returns:
        A scalar Tensor.

    Example:
        >>> out = mk.ops.ones((4, 3))
        >>> float(mk.layers.layer_losses.activity_loss(mk.regularizers.L1(1.0), out))  # 12 / 4
        3.0
    """
    loss = regularizer(output)
    if output.ndim:
        batch = output.shape[0]
        loss = loss / batch if batch else ops.zeros_like(loss)  # (Keras's divide_no_nan)
    return loss


class LayerLosses:
    """The loss part of `Layer` (see the module); not used on its own."""

    @property
    def losses(self):
        """The losses training adds to the compiled loss: `add_loss`'s and the regularizers'.

        Collected over this layer and every layer it tracks: the losses added
        during (or since) this layer's latest call, the callables added outside
        `call()` (evaluated now), then `regularizer(weight)` for every tracked
        weight that has a regularizer, from its current value (so inside a
        `GradientTape` the penalties are differentiable). A frozen weight's
        penalty is included too (as in tf.keras; Keras 3 skips it): it adds to
        the loss, but the weight does not move.

        Returns:
            A list of Tensors (scalars, unless a layer added another shape).

        Example:
            >>> from minikeras.layers import Dense
            >>> layer = Dense(2, kernel_initializer="ones", kernel_regularizer="l2")
            >>> _ = layer(np.ones((1, 3)))
            >>> [round(float(loss), 6) for loss in layer.losses]  # 0.01 * sum(square(kernel))
            [0.06]
        """
        return self._gather_losses(self._loss_sources())

    def add_loss(self, loss):
        """Adds a loss to `losses`, which `fit` adds to the compiled loss.

        Inside `call()`, the usual place, give a Tensor computed from the
        inputs or the weights. As in Keras, the losses added in `call()` are
        forgotten at the start of each outermost call, so a training step
        counts each once and nothing accumulates from step to step. Outside
        `call()`, give a zero-argument callable such as
        `lambda: ops.mean(layer.kernel)`: it is kept, and evaluated each time
        `losses` is read (a callable given inside `call()` is evaluated lazily
        too, but counts for that call only).

        Args:
            loss: a Tensor (`fit` sums it to a scalar), a number, or a
                zero-argument callable returning one.

        Returns:
            None.

        Raises:
            ValueError: for anything else.

        Example:
            >>> class Penalized(mk.layers.Layer):
            ...     def call(self, inputs):
            ...         self.add_loss(0.5 * mk.ops.sum(inputs))
            ...         return inputs
            >>> layer = Penalized()
            >>> _ = layer(np.ones((2, 2))); _ = layer(np.ones((2, 2)))
            >>> [float(loss) for loss in layer.losses]  # the latest call's only
            [2.0]
        """
        if callable(loss):
            if not _state.call_stack:
                self._callable_losses.append(loss)
                # What a training step computes has changed: a compiled step recorded
                # without this loss must not be replayed (see trainers.compiled_step).
                TrackingGeneration.bump()
                return
        elif isinstance(loss, (np.ndarray, np.generic, int, float)) and not isinstance(loss, bool):
            loss = Tensor(loss)
        elif not isinstance(loss, Tensor):
            raise ValueError(
                f"{type(self).__name__} '{self.name}'.add_loss: expected a Tensor, a number or "
                f"a zero-argument callable, got {loss!r:.100} of type {type(loss).__name__}"
            )
        self._losses.append((call_checks.counter.outermost_calls, loss))

    def _loss_sources(self):
        """The layers whose added losses count, and the tracked weights with a regularizer.

        `fit` finds them once, not at every step: the walk costs tens of microseconds.
        """
        return self._training_sources()[1]

    def _training_sources(self):
        """`(trainable_weights, _loss_sources())`, from one walk over what this layer tracks."""
        weights, trainable, _ = tracking.weight_lists(self)  # cached while nothing changes
        layers = [self, *tracking.tracked_layers(self)]
        regularized = [variable for variable in weights if variable.regularizer is not None]
        return list(trainable), (layers, regularized)

    def _gather_losses(self, sources):
        """`losses`, from what `_loss_sources` found."""
        layers, regularized = sources
        since = self._latest_call
        losses = []
        for layer in layers:
            losses.extend(_as_loss(loss) for number, loss in layer._losses if number >= since)
            losses.extend(_as_loss(loss) for loss in layer._callable_losses)
        losses.extend(_as_loss(variable.regularizer(variable)) for variable in regularized)
        return losses


def _as_loss(loss):
    """A loss as a Tensor: a callable is evaluated now, a number converted."""
    if callable(loss):
        loss = loss()
    return loss if isinstance(loss, Tensor) else Tensor(loss)

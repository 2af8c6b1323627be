"""`ModelLoops`: `fit`, `evaluate`, `predict` and their one-batch forms, a base of `Model`.

Each method checks nothing itself: it hands over to its body in
`minikeras.trainers` (`fit_loop`, `evaluation`, `batch_methods`), which
calls the overridable steps (`minikeras.models.model_steps`) once per batch.
"""

from minikeras.models.model_steps import ModelSteps, _trainers

__all__ = ["ModelLoops"]


class ModelLoops(ModelSteps):
    """`fit`, `evaluate`, `predict` and the one-batch methods of `Model` (see the module).

    Example:
        >>> model = mk.Sequential([mk.layers.Dense(1, kernel_initializer="zeros")])
        >>> model.compile("sgd", "mse")
        >>> model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0).epoch
        [0, 1]
        >>> model.test_on_batch(np.ones((4, 2)), np.ones((4, 1))) < 1.0
        True
    """

    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        class_weight=None,
        sample_weight=None,
        initial_epoch=0,
        steps_per_epoch=None,
        validation_steps=None,
        validation_batch_size=None,
        validation_freq=1,
    ):
        """Trains the model for `epochs` passes over the data.

        Input is checked before any training happens (an iterable of batches
        that is not a list or a generator, or any iterable given with
        `steps_per_epoch`, is checked as it is read). Ctrl-C
        stops cleanly at the end of the current step: the model keeps the
        weights of its last completed step, and the History so far is
        returned (the interrupted epoch's logs without validation); a
        `BackupAndRestore` keeps its last backup to resume from (with
        `save_freq="epoch"`, that of the last complete epoch: the interrupted
        one is not backed up).
        `model.trainable` and the layers' `trainable` flags are read when
        `fit` starts. A non-finite loss warns once (`RuntimeWarning`) unless a
        callback such as `TerminateOnNaN` stops training. When the epochs
        end after at least one step, however they end (done, stopped early,
        Ctrl-C, or an error raised by a step or a callback), `fit` calls the
        optimizer's `finalize_variable_values` on the trained weights (before
        `on_train_end`, which an error skips), as Keras 3 with JAX does: with
        `use_ema=True`, the model ends with their moving averages. (Keras's
        torch and TensorFlow `fit`s skip it when an error is raised.)

        Args:
            x: inputs (a numpy array, a list of arrays for several inputs, or
                a dict of arrays keyed by input name), or an iterable of
                `(x,)` / `(x, y)` / `(x, y, sample_weight)` batches (a
                generator, a list, or a `utils.PyDataset`, whose
                `on_epoch_end` is called after each epoch).
            y: targets (a list or a dict by output name for several outputs;
                None when `x` yields batches, or when nothing needs targets).
            batch_size: samples per step (None means 32, as in Keras; ignored
                for batch iterables).
            epochs: the epoch to stop at (counted from 0, like `initial_epoch`).
            verbose: `"auto"` or 1 (a progress bar), 2 (a line per epoch), 0.
            callbacks: a list of `minikeras.callbacks.Callback`.
            validation_split: fraction of the arrays, taken from the end
                before shuffling, held out for validation (ignored when
                `validation_data` is given).
            validation_data: `(x_val, y_val)` or `(x_val, y_val, sample_weight)`,
                or an iterable of such batches.
            shuffle: shuffle the training samples every epoch (every pass,
                with `steps_per_epoch`); `"batch"`, as in Keras, keeps the
                batches in order and shuffles the samples inside each.
            class_weight: optional dict of class index -> loss weight (for the
                training samples; compiled metrics stay unweighted, as in Keras).
            sample_weight: optional per-sample loss weights.
            initial_epoch: the epoch to start at (to resume training).
            steps_per_epoch: the batches of one epoch, taken from one pass
                over the data that carries on from epoch to epoch (as in
                Keras), so a generator that never ends can feed training.
                If the data runs out, the epoch ends there with a warning; a
                generator that runs out stops training, while arrays (a new
                shuffled pass) and a list start over the next epoch. With
                arrays and no `batch_size`, the batches are
                `ceil(samples / steps_per_epoch)` samples, as in Keras 3.
                None: an epoch is one pass (a generator is read whole
                first, so it must end).
            validation_steps: how many validation batches each validation
                takes: the first ones, at every epoch (as Keras starts the
                validation data afresh; a generator's are read once). With
                arrays and no batch size, the batches are
                `ceil(samples / validation_steps)` samples.
            validation_batch_size: samples per validation batch (None: `batch_size`).
            validation_freq: validate after every `validation_freq`-th epoch
                (an int, as in Keras 3).

        Returns:
            A `History` whose `history` dict holds the logs of every epoch.

        Raises:
            RuntimeError: if the model is not compiled.
            ValueError: if there is no loss at all (no compiled loss, no
                `add_loss`, default `train_step`); for mismatched lengths,
                NaN in the targets or sample weights, non-numeric data, an
                empty data set, a class missing
                from `class_weight`, or a bad `validation_split` or `batch_size`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)])
            >>> model.compile("sgd", "mse")
            >>> history = model.fit(np.ones((16, 2)), np.ones((16, 1)), epochs=3, verbose=0)
            >>> len(history.history["loss"])
            3
            >>> def batches():  # never ends
            ...     while True:
            ...         yield np.ones((4, 2)), np.ones((4, 1))
            >>> history = model.fit(batches(), epochs=2, steps_per_epoch=5, verbose=0)
            >>> len(history.history["loss"])
            2
        """
        return _trainers().fit_loop.fit(
            self,
            x,
            y,
            batch_size,
            epochs,
            verbose,
            callbacks,
            validation_split,
            validation_data,
            shuffle,
            class_weight,
            sample_weight,
            initial_epoch,
            steps_per_epoch,
            validation_steps,
            validation_batch_size,
            validation_freq,
        )

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 steps=None, callbacks=None, return_dict=False):  # fmt: skip
        """Computes the loss and metrics over data, in batches.

        Args:
            x: inputs (arrays, a list, or a dict by input name), or an iterable
                of `(x, y)` batches (a generator, a list, a `utils.PyDataset`).
            y: targets (None when `x` yields batches).
            batch_size: samples per batch.
            verbose: `"auto"` or 1 (a progress bar), 2 (one line), 0 (silent).
            sample_weight: optional per-sample weights.
            steps: evaluate the first `steps` batches (fewer, with a
                warning, if the data ends first); with arrays and no
                `batch_size`, the batches are `ceil(samples / steps)` samples
                (as in Keras 3). None: all of them.
            callbacks: a list of `minikeras.callbacks.Callback`; their
                `on_test_*` hooks are called.
            return_dict: return a dict instead of a list.

        Returns:
            The loss if there are no metrics, else `[loss, *metrics]`, or a dict.

        Raises:
            RuntimeError: if the model is not compiled.
            ValueError: for bad input, as in `fit`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1, kernel_initializer="zeros")])
            >>> model.compile("sgd", "mse", metrics=["mae"])
            >>> model.evaluate(np.ones((8, 2)), np.full((8, 1), 2.0), verbose=0)
            [4.0, 2.0]
        """
        return _trainers().evaluation.evaluate(
            self, x, y, batch_size, verbose, sample_weight, steps, callbacks, return_dict
        )

    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None):
        """Runs the model on inputs in batches and returns numpy outputs.

        Args:
            x: inputs (a numpy array, or a list of arrays), or an iterable of
                input batches.
            batch_size: samples per batch.
            verbose: 1 shows a progress bar, 2 one line at the end; 0 (the
                default) and `"auto"` are silent, where Keras's default
                `"auto"` draws a bar.
            steps: predict the first `steps` batches, so a generator that
                never ends can be used; fewer, with a warning, if the data
                ends first (as in Keras). With arrays and no `batch_size`, the
                batches are `ceil(samples / steps)` samples (as in Keras 3).
                None: all of them.
            callbacks: a list of `minikeras.callbacks.Callback`; their
                `on_predict_*` hooks are called (batch logs hold `"outputs"`;
                `params["steps"]` is `steps` when given, and `params["epochs"]`
                is 1, as in Keras).

        Returns:
            A numpy array (or a list of them for several outputs).

        Raises:
            ValueError: for empty or non-numeric input, or a bad `batch_size`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(3)])
            >>> model.predict(np.ones((70, 2)), batch_size=32).shape
            (70, 3)
        """
        return _trainers().evaluation.predict(self, x, batch_size, verbose, steps, callbacks)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """Runs one training step (`train_step`) on one batch.

        Args:
            x: input data of one batch.
            y: targets of the batch.
            sample_weight: optional per-sample weights.
            class_weight: optional dict of class index -> weight.
            return_dict: return a dict of logs instead of a list.

        Returns:
            The loss (a float) if there are no metrics, else `[loss, *metrics]`,
            or a dict with `return_dict=True`.

        Raises:
            RuntimeError: if the model is not compiled.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)])
            >>> model.compile("sgd", "mse")
            >>> isinstance(model.train_on_batch(np.ones((4, 2)), np.ones((4, 1))), float)
            True
        """
        return _trainers().batch_methods.train_on_batch(
            self, x, y, sample_weight, class_weight, return_dict
        )

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """Computes the loss and metrics on one batch (`test_step`), without training.

        Args:
            x: input data of one batch.
            y: targets of the batch.
            sample_weight: optional per-sample weights.
            return_dict: return a dict of logs instead of a list.

        Returns:
            Like `train_on_batch`.

        Raises:
            RuntimeError: if the model is not compiled.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1, kernel_initializer="zeros")])
            >>> model.compile("sgd", "mse")
            >>> model.test_on_batch(np.ones((4, 2)), np.ones((4, 1)))
            1.0
        """
        return _trainers().batch_methods.test_on_batch(self, x, y, sample_weight, return_dict)

    def predict_on_batch(self, x):
        """The model's outputs for one batch (`predict_step`), as numpy arrays.

        Args:
            x: input data of one batch.

        Returns:
            A numpy array (or a list of them for several outputs).

        Example:
            >>> model = mk.Sequential([mk.layers.Dense(3)])
            >>> model.predict_on_batch(np.ones((2, 4))).shape
            (2, 3)
        """
        return _trainers().batch_methods.predict_on_batch(self, x)

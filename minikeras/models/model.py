"""`Model`: a layer with a name for the whole network: subclassed or functional.

Subclass it (`__init__` creates layers, `call` uses them), or give it the
inputs and outputs of a functional graph: `Model(inputs, outputs)`. Training
(`compile`, `fit`, ...) comes from `ModelTraining`, whose bodies are in
`minikeras.trainers`.
"""

import numpy as np

from minikeras.engine.context import state as _state
from minikeras.layers import tracking
from minikeras.layers.layer import Layer, unique_name
from minikeras.models import graph, replayed_call, summary
from minikeras.models.model_layers import ModelLayers
from minikeras.models.model_saving import ModelSaving
from minikeras.models.model_training import ModelTraining
from minikeras.tree import map_structure

__all__ = ["Model"]


class Model(ModelLayers, ModelTraining, ModelSaving, Layer):
    """A network of layers, trained and saved as one.

    Two ways to make one:

    - subclass it: create layers in `__init__`, use them in `call(inputs)`;
    - functional: `Model(inputs, outputs)` with `minikeras.Input` tensors
      passed through layers.

    Args:
        inputs: (functional only) the `Input` tensor(s).
        outputs: (functional only) the symbolic output tensor(s).
        name: the model's name; by default a functional `Model` is named
            `"functional"`, `"functional_1"`, ... (Keras's `Functional` class)
            and a subclass after its class name.
        **kwargs: `trainable`, `dtype`.

    Raises:
        ValueError: if `outputs` cannot be reached from `inputs`.

    Example:
        >>> from minikeras.layers import Dense, Input
        >>> x = Input(shape=(3,))
        >>> model = mk.Model(x, Dense(2)(Dense(4, activation="relu")(x)))
        >>> model(np.ones((5, 3))).shape, len(model.weights)
        ((5, 2), 4)
    """

    _output_mask = None  # the output mask of the latest call (see compute_mask)
    _summary_shows_inputs = True  # a functional summary lists its InputLayers, as Keras's
    # What compile() and fit() attach is not part of the network: the optimizer's
    # state is not among the model's weights, as in Keras.
    _untracked_attributes = Layer._untracked_attributes | {
        "optimizer", "loss", "metrics", "history", "_loss_identifier", "loss_weights",
        "_compile_loss", "_compile_metrics", "_loss_tracker", "_step_cache", "_initial_epoch",
        "_compiled_step", "_batch_cache", "stop_training", "_compile_arguments",
        "_graph_operations",  # (graph.graph_operations's cache: its InputLayers are no weights)
        "_fit_interrupted",  # (fit's bookkeeping: no set of it makes a recorded call stale)
    }  # fmt: skip

    def __init__(self, inputs=None, outputs=None, name=None, **kwargs):
        if name is None and type(self) is Model and (inputs is not None or outputs is not None):
            name = unique_name("functional")  # Keras builds a `Functional` here
        super().__init__(name=name, **kwargs)
        self._inputs = None
        if inputs is not None or outputs is not None:
            self._init_functional(inputs, outputs)

    # ------------------------------------------------------------ functional

    def _init_functional(self, inputs, outputs):
        self._inputs, self._outputs, self._nodes = (
            inputs,
            outputs,
            graph.nodes_between(inputs, outputs),
        )
        self._layers = []
        for node in self._nodes:
            if all(node.layer is not layer for layer in self._layers):
                self._layers.append(node.layer)
        self.built = True
        self._output_shape = map_structure(lambda t: t.shape, outputs)
        object.__setattr__(self, "_casts_float_inputs", False)  # (graph.run casts per Input)

    _replays_calls = False  # (a subclass: True; a functional Model is told by its inputs)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # A subclass's call may be replayed too: a graph's (a Sequential, a functional
        # subclass) or a plain call of its own (`models.plain_calls`); `program_for` decides.
        cls._replays_calls = True

    def __call__(self, *args, **kwargs):
        # A model of plain-math layers may replay its recorded call: under a tape, as
        # one recorded node; outside any, its forward pass alone (`predict`, `evaluate`).
        if len(args) == 1 and (
            type(self)._replays_calls or (type(self) is Model and self._inputs is not None)
        ):
            if _state.active_tapes:
                outputs = replayed_call.tape_call(self, args[0], kwargs)
            else:
                outputs = replayed_call.inference_call(self, args[0], kwargs)
            if outputs is not None:
                return outputs
        return super().__call__(*args, **kwargs)

    def compute_output_spec(self, *args, **kwargs):
        """The symbolic outputs for symbolic inputs: the graph replayed, or a trace.

        Args:
            *args: the inputs (symbolic), then further arguments.
            **kwargs: keyword arguments.

        Returns:
            A `SymbolicTensor` or a structure of them.

        Example:
            >>> x = mk.Input((10, 8))
            >>> model = mk.Model(x, mk.layers.Conv1D(4, 3)(x))
            >>> model.compute_output_spec(mk.Input((None, 8))).shape
            (None, None, 4)
        """
        if self._inputs is not None and not args[1:] and not kwargs:
            return graph.output_spec(self, args[0])
        return super().compute_output_spec(*args, **kwargs)

    def call(self, inputs, training=None, mask=None):
        """Runs the functional graph (subclasses override this).

        Args:
            inputs: data structured like the model's inputs.
            training: passed to layers that accept it.
            mask: optional masks of the inputs (same structure), passed on as
                layers' `compute_mask` say.

        Returns:
            The outputs, structured like the model's; a list or tuple of one
            output gives that output, as Keras's functional call does (on
            symbolic inputs the list is kept, as in Keras).

        Raises:
            NotImplementedError: for a subclass that does not define `call`.

        Example:
            >>> from minikeras.layers import Dense, Input
            >>> x = Input(shape=(2,))
            >>> mk.Model(x, Dense(1)(x)).call(mk.ops.ones((3, 2))).shape
            (3, 1)
        """
        if self._inputs is None:
            raise NotImplementedError(
                f"{type(self).__name__}: a subclassed Model must define call(inputs)"
            )
        outputs = graph.run(self, inputs, training, mask)
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            return outputs[0]  # as Keras: `Model(x, [y])` gives y itself on data
        return outputs

    def compute_mask(self, inputs, mask=None):
        """The mask of the outputs of this model's latest call.

        Sequential and functional models carry masks from layer to layer as
        they run, and keep the one they end with; a subclassed model returns
        None unless it overrides this.

        Args:
            inputs: the inputs of that call (unused: the mask is already known).
            mask: the inputs' mask (unused, likewise).

        Returns:
            The output mask, or None.

        Example:
            >>> from minikeras.layers import Dense, Input
            >>> x = Input(shape=(2,))
            >>> model = mk.Model(x, Dense(1)(x))
            >>> _ = model(np.ones((1, 2)))
            >>> model.compute_mask(np.ones((1, 2))) is None
            True
        """
        return self._output_mask

    # Layer.__call__ attaches the mask a call ended with only when there is one (see above).
    _mask_is_of_call = True
    # ---------------------------------------------------------------- build

    def build(self, input_shape):
        """Builds a model by a dry call on a zero batch of `input_shape`.

        Args:
            input_shape: a tuple (None for the batch axis), or a list of them.

        Returns:
            None.

        Example:
            >>> from minikeras.layers import Dense
            >>> class Net(mk.Model):
            ...     def __init__(self):
            ...         super().__init__()
            ...         self.out = Dense(2)
            ...     def call(self, x):
            ...         return self.out(x)
            >>> net = Net(); net.build((None, 3)); net.count_params()
            8
        """
        if self.built or _call_in_progress(self):
            self.built = True
            return

        def zeros(shape):
            return np.zeros(tuple(1 if s is None else s for s in shape), dtype=self.dtype)

        several = isinstance(input_shape, list) and input_shape
        if several and isinstance(input_shape[0], (tuple, list)):
            dummy = [zeros(shape) for shape in input_shape]
        else:
            dummy = zeros(input_shape)
        # Built before the dry call, so that it does not run build() again (a
        # subclass's build() ending in super().build() may be what called this).
        self.built = True
        try:
            self(dummy, training=False)
        except BaseException:
            self.built = False
            raise

    # -------------------------------------------------------------- summary

    def summary(
        self,
        line_length=None,
        positions=None,
        print_fn=None,
        expand_nested=False,
        show_trainable=False,
        layer_range=None,
    ):
        """Prints the layers, their output shapes and parameter counts.

        An unbuilt model says so, and how to build it, instead of failing.
        The totals give each count's memory, and, once the optimizer is
        built, its variables too ("Optimizer params"), as Keras's do.

        Differs from Keras: a plain-text table whose columns fit their
        contents (Keras draws a box with rich and wraps long cells), and a
        functional model with branches has no "Connected to" column.

        Args:
            line_length: the table's least width in characters; None fits it
                to its contents.
            positions: where each column ends, as fractions of `line_length`
                (or character counts); a column is never narrower than its
                contents.
            print_fn: a function taking one string; `print` by default.
            expand_nested: also list each nested model's layers under it.
            show_trainable: also show whether each layer is trainable (Y or N;
                "-" for a layer without weights), as Keras's column does.
            layer_range: two layer names (regular expressions): the rows from
                the first layer matching the first to the last matching the
                second, both included; None for all.

        Returns:
            None.

        Raises:
            ValueError: if `layer_range` is not two strings or matches no layer.

        Example:
            >>> from minikeras import Sequential
            >>> from minikeras.layers import Dense
            >>> Sequential([Dense(2)], name="s").summary()
            Model 's' is not built yet: call it on a batch of data, or call model.build(input_shape), to see its layers and parameters.
        """  # noqa: E501
        summary.print_summary(
            self,
            print_fn or print,
            show_trainable,
            line_length=line_length,
            positions=positions,
            expand_nested=expand_nested,
            layer_range=layer_range,
        )

    def reset_states(self):
        """Clears the kept states of every stateful layer in the model, nested ones too.

        Layers that are not stateful are left alone, as in Keras.

        Returns:
            None.

        Example:
            >>> from minikeras.layers import LSTM, Input
            >>> model = mk.Sequential([Input(batch_shape=(2, None, 3)), LSTM(4, stateful=True)])
            >>> _ = model(np.ones((2, 5, 3)))
            >>> model.reset_states()
            >>> float(np.abs(model.layers[0].states[0].numpy()).max())
            0.0
        """
        for layer in tracking.tracked_layers(self):
            if getattr(layer, "stateful", False) is True:
                layer.reset_states()


def _call_in_progress(model):
    from minikeras.engine.context import state

    return any(frame.layer is model for frame in state.call_stack)


Model._call_mask_method = Model.compute_mask

"""`Model`: a layer with a name for the whole network: subclassed or functional.

Subclass it (`__init__` creates layers, `call` uses them), or give it the
inputs and outputs of a functional graph: `Model(inputs, outputs)`. Training
(`compile`, `fit`, ...) is added by `minikeras.training`.
"""

import numpy as np

from minikeras.layers import tracking
from minikeras.layers.input_layer import SymbolicTensor, map_structure
from minikeras.layers.layer import Layer
from minikeras.trainer import Trainer

__all__ = ["Model"]


class Model(Trainer, Layer):
    """A network of layers, trained and saved as one.

    Two ways to make one:
    - subclass it: create layers in `__init__`, use them in `call(inputs)`;
    - functional: `Model(inputs, outputs)` with `minikeras.Input` tensors
      passed through layers.

    Args:
        inputs: (functional only) the `Input` tensor(s).
        outputs: (functional only) the symbolic output tensor(s).
        name: the model's name.
        **kwargs: `trainable`, `dtype`.

    Raises:
        ValueError: if `outputs` cannot be reached from `inputs`.

    Example:
        >>> from minikeras.layers import Dense, Input
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(2)(Dense(4, activation="relu")(x)))
        >>> model(np.ones((5, 3))).shape, len(model.weights)
        ((5, 2), 4)
    """

    _fixed_last_axis = False
    _output_mask = None  # the output mask of the latest call (see compute_mask)
    # What compile() and fit() attach is not part of the network: the optimizer's
    # state is not among the model's weights, as in Keras.
    _untracked_attributes = Layer._untracked_attributes | {
        "optimizer", "loss", "metrics", "history", "_loss_identifier",
    }  # fmt: skip

    def __init__(self, inputs=None, outputs=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._inputs = None
        if inputs is not None or outputs is not None:
            self._init_functional(inputs, outputs)

    # ------------------------------------------------------------ functional

    def _init_functional(self, inputs, outputs):
        if inputs is None or outputs is None:
            raise ValueError("Model: a functional model needs both `inputs` and `outputs`")
        input_ids = set()
        map_structure(lambda t: input_ids.add(id(_symbolic(t, "inputs"))), inputs)
        nodes, seen = [], set()

        def visit(tensor):
            tensor = _symbolic(tensor, "outputs")
            if id(tensor) in input_ids:
                return
            if tensor.node is None:
                raise ValueError(
                    f"Model: output {tensor} depends on an Input that is not in `inputs`"
                )
            if id(tensor.node) in seen:
                return
            seen.add(id(tensor.node))
            map_structure(visit, tensor.node.inputs)
            nodes.append(tensor.node)

        map_structure(visit, outputs)
        self._inputs, self._outputs, self._nodes = inputs, outputs, nodes
        self._layers = []
        for node in nodes:
            if all(node.layer is not layer for layer in self._layers):
                self._layers.append(node.layer)
        self.built = True
        self._output_shape = map_structure(lambda t: t.shape, outputs)

    def _run_graph(self, inputs, training, mask=None):
        values, masks = {}, {}  # id(symbolic tensor) -> its value; its mask, if any
        try:
            _bind(self._inputs, inputs, values)
        except (KeyError, TypeError, ValueError):
            raise ValueError(
                f"Model '{self.name}' expects inputs structured like {self._inputs}, "
                f"got {type(inputs).__name__}"
            ) from None
        if mask is not None:
            _bind_masks(self, self._inputs, mask, masks)
        for node in self._nodes:
            args = map_structure(lambda t: values[id(t)], node.inputs)
            kwargs = dict(node.kwargs)
            if training is not None:
                kwargs.setdefault("training", training)
            # Masks travel beside the values (see Layer.compute_mask).
            node_mask = _mask_of(node.inputs, masks)
            if node_mask is not None:
                kwargs.setdefault("mask", node_mask)
            _bind(node.outputs, node.layer(args, *node.args, **kwargs), values)
            output_mask = node.layer.compute_mask(args, kwargs.get("mask"))
            if output_mask is not None:
                _bind_masks(node.layer, node.outputs, output_mask, masks)
        object.__setattr__(self, "_output_mask", _mask_of(self._outputs, masks))
        return map_structure(lambda t: values[id(t)], self._outputs)

    def call(self, inputs, training=None, mask=None):
        """Runs the functional graph (subclasses override this).

        Args:
            inputs: data structured like the model's inputs.
            training: passed to layers that accept it.
            mask: optional masks of the inputs (same structure), passed on as
                layers' `compute_mask` say.

        Returns:
            The outputs.

        Raises:
            NotImplementedError: for a subclass that does not define `call`.

        Example:
            >>> from minikeras.layers import Dense, Input
            >>> x = Input(shape=(2,))
            >>> Model(x, Dense(1)(x)).call(ops.ones((3, 2))).shape
            (3, 1)
        """
        if self._inputs is None:
            raise NotImplementedError(
                f"{type(self).__name__}: a subclassed Model must define call(inputs)"
            )
        return self._run_graph(inputs, training, mask)

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
            >>> model = Model(x, Dense(1)(x))
            >>> _ = model(np.ones((1, 2)))
            >>> model.compute_mask(np.ones((1, 2))) is None
            True
        """
        return self._output_mask

    # ---------------------------------------------------------------- build

    def build(self, input_shape):
        """Builds a model by a dry call on a zero batch of `input_shape`.

        Args:
            input_shape: a tuple (None for the batch axis), or a list of them.

        Returns:
            None.

        Example:
            >>> from minikeras.layers import Dense
            >>> class Net(Model):
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

    def summary(self, print_fn=None):
        """Prints the layers, their output shapes and parameter counts.

        An unbuilt model says so, and how to build it, instead of failing.

        Args:
            print_fn: a function taking one string; `print` by default.

        Returns:
            None.

        Example:
            >>> from minikeras import Sequential
            >>> from minikeras.layers import Dense
            >>> Sequential([Dense(2)], name="s").summary()
            Model 's' is not built yet: call it on a batch of data, or call model.build(input_shape), to see its layers and parameters.
        """  # noqa: E501
        print_fn = print_fn or print
        if not self.built:
            print_fn(
                f"Model '{self.name}' is not built yet: call it on a batch of data, or call "
                "model.build(input_shape), to see its layers and parameters."
            )
            return
        children = [
            value
            for path, owner, value in tracking.walk(self)
            if owner is self and isinstance(value, Layer)
        ]
        rows = [("Layer (type)", "Output Shape", "Param #")]
        for layer in children:
            shape = _batch_none(layer._output_shape)
            params = layer.count_params() if layer.built else 0
            rows.append((f"{layer.name} ({type(layer).__name__})", str(shape), f"{params:,}"))
        widths = [max(len(row[i]) for row in rows) + 2 for i in range(3)]
        rule = "-" * sum(widths)
        print_fn(f'Model: "{self.name}"')
        print_fn(rule)
        for index, row in enumerate(rows):
            print_fn("".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
            if index == 0:
                print_fn(rule.replace("-", "="))
        print_fn(rule)
        trainable = sum(int(np.prod(w.shape)) for w in self.trainable_weights)
        frozen = sum(int(np.prod(w.shape)) for w in self.non_trainable_weights)
        print_fn(f"Total params: {trainable + frozen:,}")
        print_fn(f"Trainable params: {trainable:,}")
        print_fn(f"Non-trainable params: {frozen:,}")

    def get_config(self):
        """A functional model's layers and calls; a subclassed model's base config only.

        A subclassed model whose constructor takes arguments overrides this to
        return them (see `minikeras.saving`).

        Returns:
            A JSON-friendly dict (see `minikeras.saving.functional`).

        Example:
            >>> Model(name="m").get_config()["name"]
            'm'
        """
        if self._inputs is not None:
            from minikeras.saving.functional import functional_config

            return functional_config(self)
        return super().get_config()

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """Makes a model from the dict `get_config` returned.

        Args:
            config: the dict.
            custom_objects: optional dict of name -> class or function, for
                the layers of a functional model.

        Returns:
            A new model (a functional one is built).

        Example:
            >>> from minikeras.layers import Dense, Input
            >>> x = Input((3,))
            >>> model = Model(x, Dense(2)(x))
            >>> Model.from_config(model.get_config())(np.ones((1, 3))).shape
            (1, 2)
        """
        if "layers" in config and "input_layers" in config:
            from minikeras.saving.functional import functional_from_config

            return functional_from_config(cls, config, custom_objects)
        return cls(**config)

    # --------------------------------------------------------------- saving

    def save(self, filepath, overwrite=True):
        """Saves the architecture, the weights and the training state in one file.

        See `minikeras.saving.save_model`: the write is atomic, and a model
        that cannot be rebuilt from its config (a subclassed one) is refused
        with a message that says to save its weights instead.

        Args:
            filepath: the path (`.minikeras` is the suggested suffix).
            overwrite: if False, an existing file is an error.

        Returns:
            None.

        Raises:
            ValueError: if the model is not built or cannot be rebuilt from its config.
            FileExistsError: if the file exists and `overwrite` is False.

        Example:
            >>> import tempfile, pathlib
            >>> from minikeras.layers import Dense, Input
            >>> x = Input((3,))
            >>> model = Model(x, Dense(2)(x))
            >>> model.save(pathlib.Path(tempfile.mkdtemp()) / "model.minikeras")
        """
        from minikeras import saving

        saving.save_model(self, filepath, overwrite=overwrite)

    def save_weights(self, filepath, overwrite=True):
        """Saves the weights, keyed by their tracked paths (see `minikeras.saving.save_weights`).

        Args:
            filepath: the path (`.weights.minikeras` is the suggested suffix).
            overwrite: if False, an existing file is an error.

        Returns:
            None.

        Raises:
            ValueError: if the model is not built.
            FileExistsError: if the file exists and `overwrite` is False.

        Example:
            >>> import tempfile, pathlib
            >>> from minikeras import Sequential
            >>> from minikeras.layers import Dense, Input
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "mlp.weights.minikeras"
            >>> Sequential([Input((3,)), Dense(2)]).save_weights(path)
        """
        from minikeras import saving

        saving.save_weights(self, filepath, overwrite=overwrite)

    def load_weights(self, filepath, skip_mismatch=False):
        """Loads weights, checking them all before assigning any (see `minikeras.saving`).

        Args:
            filepath: a weights file, or a model file (its weights are used).
            skip_mismatch: load what matches and warn about the rest, instead
                of raising.

        Returns:
            None.

        Raises:
            ValueError: if the model is not built.
            minikeras.saving.LoadError: listing every problem; the model is unchanged.

        Example:
            >>> import tempfile, pathlib
            >>> from minikeras import Sequential
            >>> from minikeras.layers import Dense, Input
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "mlp.weights.minikeras"
            >>> model = Sequential([Input((3,)), Dense(2)]); model.save_weights(path)
            >>> copy = Sequential([Input((3,)), Dense(2)]); copy.load_weights(path)
            >>> np.array_equal(copy.get_weights()[0], model.get_weights()[0])
            True
        """
        from minikeras import saving

        saving.load_weights(self, filepath, skip_mismatch=skip_mismatch)


def _call_in_progress(model):
    from minikeras.layers.layer import _call_stack

    return any(frame.layer is model for frame in _call_stack)


def _symbolic(tensor, argument):
    if not isinstance(tensor, SymbolicTensor):
        raise ValueError(
            f"Model: `{argument}` must be minikeras.Input tensors or outputs of layers "
            f"called on them, got {type(tensor).__name__}"
        )
    return tensor


def _bind(symbolic, value, values):
    """Records `values[id(placeholder)] = data` for matching structures."""
    if isinstance(symbolic, dict):
        for key in symbolic:
            _bind(symbolic[key], value[key], values)
    elif isinstance(symbolic, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(symbolic):
            raise ValueError("structure mismatch")
        for placeholder, item in zip(symbolic, value):
            _bind(placeholder, item, values)
    else:
        values[id(symbolic)] = value


def _mask_of(symbolic, masks):
    """The masks of `symbolic` tensors, in their structure; None if none has one."""
    if not masks:
        return None
    found = map_structure(lambda t: masks.get(id(t)), symbolic)
    leaves = []
    map_structure(leaves.append, found)
    return found if any(leaf is not None for leaf in leaves) else None


def _bind_masks(layer, symbolic, mask, masks):
    try:
        _bind(symbolic, mask, masks)
    except (KeyError, TypeError, ValueError):
        raise ValueError(
            f"{type(layer).__name__} '{layer.name}': its mask must have the structure of "
            f"{symbolic}, got {type(mask).__name__}"
        ) from None


def _batch_none(shape):
    if isinstance(shape, tuple) and shape and all(isinstance(s, (int, type(None))) for s in shape):
        return (None, *shape[1:])
    if isinstance(shape, list):
        return [_batch_none(s) for s in shape]
    return shape if shape is not None else "?"

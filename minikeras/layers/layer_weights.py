"""A layer's weights: `add_weight`, `add_constant`, `weights`, `get_weights` / `set_weights`.

A mixin of `Layer`. `weights`, `trainable_weights` and `non_trainable_weights`
(and their `variables` names) are the lists `tracking.weight_lists` keeps.
Weights made with `add_weight` belong to the layer even before they are
assigned to an attribute; `set_weights` checks every array before it assigns
any.
"""

import numpy as np

from minikeras import config, constraints, initializers, regularizers
from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import TrackingGeneration, Variable
from minikeras.layers import tracking

__all__ = ["LayerWeights"]


class LayerWeights:
    """The weight-making part of `Layer` (see the module); not used on its own."""

    @property
    def weights(self):
        """Every Variable the layer tracks, each once, in Keras 3's order (see `weight_order`)."""
        return list(tracking.weight_lists(self)[0])

    @property
    def variables(self):
        """Same as `weights`."""
        return self.weights

    @property
    def trainable_weights(self):
        """The tracked Variables that training updates."""
        return list(tracking.weight_lists(self)[1])

    @property
    def trainable_variables(self):
        """Same as `trainable_weights`."""
        return self.trainable_weights

    @property
    def non_trainable_weights(self):
        """The tracked Variables that training leaves alone."""
        return list(tracking.weight_lists(self)[2])

    @property
    def non_trainable_variables(self):
        """Same as `non_trainable_weights`."""
        return self.non_trainable_weights

    def add_weight(self, *args, **kwargs):
        """Creates a weight of this layer and tracks it.

        Accepts the Keras 3 form and the TensorFlow 2 form (name first):
        `add_weight(shape=(5, 3), initializer="random_normal", trainable=True)` or
        `add_weight("kernel", shape=[5, 3], dtype="float32", initializer=...)`.

        Args:
            *args: `shape` first (Keras 3), or `name` then `shape` (TF 2).
            **kwargs: `shape`, `initializer` (default `"glorot_uniform"`; pass
                `"zeros"` for a bias), `dtype` (default the layer's
                `variable_dtype`), `trainable` (default True), `regularizer`,
                `constraint`, `name`, and `autocast` (default True: a
                mixed-precision layer's call reads it in its compute dtype).

        Returns:
            The new `Variable`.

        Raises:
            TypeError: for unknown arguments.
            ValueError: for a missing shape.

        Example:
            >>> layer = mk.layers.Layer()
            >>> w = layer.add_weight("w", shape=(2, 3), initializer="zeros")
            >>> w.shape, layer.weights[0] is w
            ((2, 3), True)
        """
        # The positional orders of tf.keras (name first) and of Keras 3.
        if args and isinstance(args[0], str):
            names = ("name", "shape", "dtype", "initializer", "regularizer", "trainable")
        else:
            names = ("shape", "initializer", "dtype", "trainable", "autocast", "regularizer")
        if len(args) > len(names):
            raise TypeError(f"add_weight: too many positional arguments ({len(args)})")
        for key, value in zip(names, args):
            if key in kwargs:
                raise TypeError(f"add_weight: got {key!r} twice")
            kwargs[key] = value
        known = {"name", "shape", "dtype", "initializer", "regularizer", "trainable", "constraint"}
        known |= {"autocast", "aggregation", "synchronization", "use_resource"}
        unknown = set(kwargs) - known
        if unknown:
            raise TypeError(f"add_weight: unexpected arguments {sorted(unknown)}")
        shape = kwargs.get("shape")
        if shape is None:
            shape = ()
        shape = tuple(int(s) for s in (shape if isinstance(shape, (list, tuple)) else (shape,)))
        name = kwargs.get("name") or f"weight_{len(self._added_weights)}"
        dtype = config.standardize_dtype(kwargs.get("dtype") or self.dtype)
        initializer = initializers.get(kwargs.get("initializer") or "glorot_uniform")
        trainable = kwargs.get("trainable")
        trainable = True if trainable is None else bool(trainable)
        variable = Variable(initializer, shape=shape, dtype=dtype, trainable=trainable, name=name)
        variable.path = f"{self.name}/{name}"
        variable.regularizer = regularizers.get(kwargs.get("regularizer"))
        variable.constraint = constraints.get(kwargs.get("constraint"))
        if kwargs.get("autocast") is False:  # read as it is even in a mixed-precision call
            variable._autocast = False
        if not self._trainable and trainable:
            variable.trainable = False
            self._frozen.append(variable)
        self._added_weights.append(variable)
        object.__setattr__(self, "_tracked_ids", None)
        TrackingGeneration.bump()
        return variable

    add_variable = add_weight

    def add_constant(self, name, value):
        """Stores an array on the layer as a constant on purpose (not a weight).

        `build()` storing a plain float array is flagged, since a weight was
        probably meant; this declares that it is not.

        Args:
            name: the attribute name.
            value: the array-like constant.

        Returns:
            The constant, as a Tensor.

        Example:
            >>> layer = mk.layers.Layer()
            >>> layer.add_constant("table", [0.5, 1.5]).numpy()
            array([0.5, 1.5], dtype=float32)
        """
        self._constants.add(name)
        constant = value if isinstance(value, Tensor) else Tensor(value)
        setattr(self, name, constant)
        return constant

    def count_params(self):
        """The number of scalars in the layer's weights.

        Returns:
            An int.

        Raises:
            ValueError: if the layer is not built yet.

        Example:
            >>> from minikeras.layers import Dense
            >>> d = Dense(4); d.build((None, 3)); d.count_params()
            16
        """
        if not self.built:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' is not built yet, so it has no weights "
                "to count: call it on data or call build(input_shape) first"
            )
        return int(sum(int(np.prod(w.shape)) for w in self.weights))

    def get_weights(self):
        """The weights' values as numpy arrays, in `weights` order.

        Returns:
            A list of numpy arrays (copies).

        Example:
            >>> from minikeras.layers import Dense
            >>> d = Dense(2); d.build((None, 3))
            >>> [w.shape for w in d.get_weights()]
            [(3, 2), (2,)]
        """
        return [w.numpy() for w in self.weights]

    def set_weights(self, weights):
        """Sets every weight from a list of arrays, in `weights` order.

        Everything is checked before anything is assigned.

        Args:
            weights: a list of array-likes, one per weight, of matching shapes.

        Returns:
            None.

        Raises:
            ValueError: if the count or a shape does not match (all are listed).

        Example:
            >>> from minikeras.layers import Dense
            >>> d = Dense(2); d.build((None, 3))
            >>> d.set_weights([np.ones((3, 2)), np.zeros(2)])
            >>> float(d.kernel.numpy().sum())
            6.0
        """
        own = self.weights
        weights = list(weights)
        if len(weights) != len(own):
            raise ValueError(
                f"{type(self).__name__} '{self.name}'.set_weights: expected {len(own)} arrays "
                f"({', '.join(w.name for w in own)}), got {len(weights)}"
            )
        arrays, problems = [], []
        for variable, value in zip(own, weights):
            array = np.asarray(value)
            if array.shape != variable.shape:
                problems.append(
                    f"{variable.name}: expected shape {variable.shape}, got {array.shape}"
                )
                continue
            # Numbers and booleans only: complex values would lose their imaginary part, and
            # object or string arrays are not weights. Checked before any weight is assigned.
            if array.dtype.kind not in "biuf":
                problems.append(
                    f"{variable.name}: expected numbers for a {variable.dtype} weight, got an "
                    f"array of dtype {array.dtype}"
                )
                continue
            target = np.dtype(variable.dtype)
            if array.dtype.kind == "f" and target.kind == "f" and array.size:
                finite = array[np.isfinite(array)]
                if finite.size and np.abs(finite).max() > np.finfo(target).max:
                    problems.append(
                        f"{variable.name}: values up to {np.abs(finite).max():.3g} do not fit "
                        f"its dtype {target}"
                    )
                    continue
            arrays.append(array.astype(target))
        if problems:
            raise ValueError(
                f"{type(self).__name__} '{self.name}'.set_weights: " + "; ".join(problems)
            )
        for variable, array in zip(own, arrays):
            variable.assign(array)

    def _own_variables(self):
        """The layer's own weights, in `weights` order: not those of the layers it holds."""
        held = set()
        for _, owner, value in tracking.walk(self):
            if owner is self and not isinstance(value, Variable):
                held.update(id(w) for w in value.weights)
        return [w for w in self.weights if id(w) not in held]

    def save_own_variables(self, store):
        """Writes the layer's own state into `store` (Keras's saving hook).

        Saving calls it for each layer, with the store of that layer's place
        in the file (`layers/dense/vars` in a `.keras` file). The default
        writes the layer's own variables (not those of the layers it holds)
        under `"0"`, `"1"`, ... Override it, together with
        `load_own_variables`, to save state that is not a variable.

        Args:
            store: a dict-like object taking arrays by string key.

        Returns:
            None.

        Example:
            >>> dense = mk.layers.Dense(2)
            >>> dense.build((None, 3))
            >>> store = {}
            >>> dense.save_own_variables(store)
            >>> sorted(store), store["0"].shape
            (['0', '1'], (3, 2))
        """
        for index, variable in enumerate(self._own_variables()):
            store[str(index)] = variable.numpy()

    def load_own_variables(self, store):
        """Reads the layer's own state from `store` (Keras's loading hook).

        The default checks every array (count, shapes, a dtype that converts)
        before it assigns any.

        Args:
            store: a dict-like object with the arrays `save_own_variables` wrote.

        Returns:
            None.

        Raises:
            ValueError: naming the layer, if the count or a shape does not match.

        Example:
            >>> dense = mk.layers.Dense(2)
            >>> dense.build((None, 3))
            >>> dense.load_own_variables({"0": np.ones((3, 2)), "1": np.zeros(2)})
            >>> float(dense.kernel.numpy().sum())
            6.0
        """
        own = self._own_variables()
        keys = [str(index) for index in range(len(store))]
        if len(store) != len(own) or any(key not in store for key in keys):
            raise ValueError(
                f"{type(self).__name__} '{self.name}'.load_own_variables: expected "
                f"{len(own)} arrays ({', '.join(w.name for w in own)}), got keys {sorted(store)}"
            )
        arrays, problems = [], []
        for key, variable in zip(keys, own):
            array = np.asarray(store[key])
            if array.shape != variable.shape or array.dtype.kind not in "biuf":
                problems.append(
                    f"{variable.name}: expected shape {variable.shape}, got {array.shape} "
                    f"of dtype {array.dtype}"
                )
            else:
                arrays.append(array.astype(variable.dtype))
        if problems:
            raise ValueError(
                f"{type(self).__name__} '{self.name}'.load_own_variables: " + "; ".join(problems)
            )
        for variable, array in zip(own, arrays):
            variable.assign(array)

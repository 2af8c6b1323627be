"""`FeatureSpace` (Keras's `keras.utils.FeatureSpace`): structured data to model inputs.

It lives among the preprocessing layers it is made of, and `minikeras`
exports it as `minikeras.utils.FeatureSpace` (as Keras exports its class from
`keras.src.layers` under `keras.utils`); `utils` itself imports no layers.
The feature kinds are in `feature_kinds`, the data reading in `feature_data`.
"""

from minikeras.engine.tensor import Tensor
from minikeras.layers.input_layer import Input
from minikeras.layers.layer import Layer
from minikeras.layers.merging import Concatenate
from minikeras.layers.preprocessing.categorical import CategoryEncoding
from minikeras.layers.preprocessing.discretization import Discretization
from minikeras.layers.preprocessing.feature_data import adapt_columns, call_columns
from minikeras.layers.preprocessing.feature_kinds import FeatureKinds, cardinality
from minikeras.layers.preprocessing.feature_specs import Cross, Feature, entry_of, spec_from_entry
from minikeras.layers.preprocessing.hashed_crossing import HashedCrossing
from minikeras.layers.preprocessing.numerical import Normalization
from minikeras.utils.progbar import Progbar

__all__ = ["FeatureSpace"]


class FeatureSpace(FeatureKinds, Layer):
    """One object that preprocesses and encodes every feature of structured (tabular) data.

    Each feature is named with its kind (a string such as
    `"integer_categorical"`, using the defaults, or a `FeatureSpace.<kind>(...)`
    call): `float`, `float_rescaled`, `float_normalized`, `float_discretized`,
    `integer_categorical`, `string_categorical`, `integer_hashed`,
    `string_hashed`, or any layer through `FeatureSpace.feature`. `adapt(data)`
    learns what the kinds need (vocabularies, means and variances, bins);
    calling the space on a dict of arrays (one sample or a batch) then encodes
    them, and `get_inputs()` / `get_encoded_features()` give the symbolic
    inputs and encoded tensors to build a functional model on.

    Each feature's preprocessor sees a `(batch, 1)` column. Features whose
    `output_mode` is `"one_hot"` are multi-hot encoded (a `CategoryEncoding`
    of the preprocessor's cardinality); crosses hash the preprocessed values
    of their features (`HashedCrossing`). The outputs come in sorted feature
    names, then sorted cross names (`"a_X_b"`): concatenated along the last
    axis (`output_mode="concat"`) or in a dict (`"dict"`).

    Differences from Keras: Keras adapts on a `tf.data.Dataset` and runs its
    preprocessing in TensorFlow; minikeras has no tf.data, so `adapt` reads a
    dict of arrays or an iterable of dict batches (a generator, a
    `PyDataset`; `(dict, labels)` pairs are read for their dicts), and calls
    return minikeras Tensors. `"string"` features take numpy str, bytes or
    object arrays. A `float` feature's preprocessor is an `Identity` layer
    (Keras's is a private one).

    Args:
        features: a dict of feature name -> kind name or `Feature`.
        output_mode: `"concat"` (default: one float vector per sample) or
            `"dict"` (the encoded features by name).
        crosses: None, or a list of tuples of feature names or of
            `FeatureSpace.cross(...)`.
        crossing_dim: the hashing bins of crosses given as tuples (default 32).
        hashing_dim: the bins of features named `"integer_hashed"` or
            `"string_hashed"` (default 32).
        num_discretization_bins: the bins of features named
            `"float_discretized"` (default 32).
        name: the space's name.

    Input shape:
        A dict of feature name -> `()` (one sample), `(batch,)` or `(batch, 1)`.

    Output shape:
        `"concat"`: `(batch, total width)`, or `(total width,)` for one sample;
        `"dict"`: `(batch, width)` per feature and cross.

    Raises:
        ValueError: for no features, an unknown kind or `output_mode`, or a
            cross of unknown features.

    Example:
        >>> space = mk.utils.FeatureSpace(
        ...     {"size": "float_normalized", "color": "string_categorical"}
        ... )
        >>> space.adapt({"size": [1.0, 3.0], "color": ["red", "red"]}, verbose=0)
        >>> space({"size": [3.0], "color": ["blue"]}).numpy()
        array([[1., 0., 1.]], dtype=float32)
        >>> inputs, encoded = space.get_inputs(), space.get_encoded_features()
        >>> model = mk.Model(inputs, mk.layers.Dense(1)(encoded))
    """

    def __init__(
        self,
        features,
        output_mode="concat",
        crosses=None,
        crossing_dim=32,
        hashing_dim=32,
        num_discretization_bins=32,
        name=None,
    ):
        super().__init__(name=name)
        if not features or not isinstance(features, dict):
            raise ValueError(
                f"FeatureSpace: `features` must be a non-empty dict, got {features!r:.100}"
            )
        if output_mode not in ("concat", "dict"):
            raise ValueError(
                f"FeatureSpace: `output_mode` must be 'concat' or 'dict', got {output_mode!r}"
            )
        self.output_mode = output_mode
        self.crossing_dim = crossing_dim
        self.hashing_dim = hashing_dim
        self.num_discretization_bins = num_discretization_bins
        self.features = {
            key: self._standardize_feature(key, value) for key, value in features.items()
        }
        self.crosses = [self._standardize_cross(cross) for cross in crosses or []]
        self.crosses_by_name = {cross.name: cross for cross in self.crosses}
        self.preprocessors = {key: f.preprocessor for key, f in self.features.items()}
        self.crossers = {c.name: HashedCrossing(c.crossing_dim, name=c.name) for c in self.crosses}
        self.one_hot_encoders = {}
        self.concat = None
        self._symbolic_inputs = {
            key: Input(shape=(1,), dtype=str if f.dtype == "string" else f.dtype, name=key)
            for key, f in self.features.items()
        }
        self._encoded = None
        self._is_adapted = False
        self._sublayers_built = False

    def _standardize_feature(self, key, feature):
        if isinstance(feature, Feature):
            return feature
        if isinstance(feature, dict):
            return spec_from_entry(feature, Feature)
        kinds = {
            "float": lambda: self.float(name=key),
            "float_normalized": lambda: self.float_normalized(name=key),
            "float_rescaled": lambda: self.float_rescaled(name=key),
            "float_discretized": lambda: self.float_discretized(
                self.num_discretization_bins, name=key
            ),
            "integer_categorical": lambda: self.integer_categorical(name=key),
            "string_categorical": lambda: self.string_categorical(name=key),
            "integer_hashed": lambda: self.integer_hashed(self.hashing_dim, name=key),
            "string_hashed": lambda: self.string_hashed(self.hashing_dim, name=key),
        }
        if not isinstance(feature, str) or feature not in kinds:
            raise ValueError(
                f"FeatureSpace: feature '{key}' has an unknown kind {feature!r:.100}; expected a "
                f"Feature or one of {sorted(kinds)}"
            )
        return kinds[feature]()

    def _standardize_cross(self, cross):
        if isinstance(cross, dict):
            cross = spec_from_entry(cross, Cross)
        if not isinstance(cross, Cross):
            cross = Cross(cross, crossing_dim=self.crossing_dim)
        unknown = [name for name in cross.feature_names if name not in self.features]
        if unknown:
            raise ValueError(
                f"FeatureSpace: the cross {cross.feature_names} names unknown features {unknown}; "
                f"the features are {sorted(self.features)}"
            )
        return cross

    # ------------------------------------------------------------------ adapt

    def _adaptable(self):
        """The names of the features whose preprocessor learns from data."""
        names = []
        for key, preprocessor in self.preprocessors.items():
            if isinstance(preprocessor, Normalization) and preprocessor.input_mean is not None:
                continue
            if getattr(preprocessor, "_has_input_vocabulary", False):
                continue
            if isinstance(preprocessor, Discretization) and preprocessor.num_bins is None:
                continue
            if hasattr(preprocessor, "adapt"):
                names.append(key)
        return names

    def adapt(self, dataset, verbose=1):
        """Learns each preprocessor's state (vocabulary, mean and variance, bins) from data.

        Keras takes a `tf.data.Dataset`; minikeras has no tf.data and takes a
        dict of arrays (read in batches of 32 rows, as Keras batches single
        samples; Keras reads a dict of `(n, 1)` columns a row at a time, which
        only the approximate bins of `float_discretized` could tell) or an
        iterable of dict batches (also of `(dict, labels)` pairs, or of
        single-sample dicts, grouped by 32).

        Args:
            dataset: a dict of feature name -> array, or an iterable of such dicts.
            verbose: whether to show a progress bar of the batches read.

        Returns:
            None.

        Raises:
            ValueError: for data of another type, missing features or no samples.
            TypeError: for values of the wrong kind (strings for a float feature).

        Example:
            >>> space = mk.utils.FeatureSpace({"n": "integer_categorical"}, output_mode="dict")
            >>> space.adapt({"n": [5, 7, 7]}, verbose=0)
            >>> space.preprocessors["n"].get_vocabulary()
            [-1, 7, 5]
        """
        names = self._adaptable()
        progress = None
        if verbose and names:
            progress = Progbar(target=None, unit_name="step")
        on_batch = None if progress is None else progress.update
        columns = adapt_columns(dataset, self.features, names, on_batch)
        if progress is not None:
            progress.update(len(columns[names[0]]), finalize=True)
        for key in names:
            self.preprocessors[key].adapt(iter(columns[key]))
        self._is_adapted = True
        self._sublayers_built = False
        self._encoded = None
        self.one_hot_encoders = {}
        self._check_if_built()

    def _check_if_adapted(self):
        if not self._is_adapted:
            if self._adaptable():
                raise ValueError(
                    f"FeatureSpace '{self.name}': call adapt(data) before using it (the "
                    f"features {self._adaptable()} learn from data)"
                )
            self._is_adapted = True

    def _check_if_built(self):
        if not self._sublayers_built:
            self.get_encoded_features()
            self._sublayers_built = True
            self.built = True
            # What a saved file rebuilds it from: each feature's column shape.
            shapes = {key: (None, 1) for key in self.features}
            object.__setattr__(self, "_build_input_shape", shapes)

    # -------------------------------------------------------------- encoding

    def get_inputs(self):
        """The symbolic inputs, one `(None, 1)` `Input` per feature (named after it).

        Returns:
            A dict of feature name -> symbolic tensor.

        Raises:
            ValueError: if the space must be adapted first.

        Example:
            >>> space = mk.utils.FeatureSpace({"x": "float"})
            >>> space.get_inputs()["x"].shape
            (None, 1)
        """
        self._check_if_built()
        return dict(self._symbolic_inputs)

    def get_encoded_features(self):
        """The encoded symbolic tensors, computed from `get_inputs()`.

        Returns:
            One `(None, width)` tensor (`"concat"`) or a dict of them (`"dict"`).

        Raises:
            ValueError: if the space must be adapted first, a `"one_hot"`
                feature's cardinality is unknown, or (`"concat"`) a feature is
                left as integers or strings.

        Example:
            >>> space = mk.utils.FeatureSpace({"x": "float", "y": "float"})
            >>> space.get_encoded_features().shape
            (None, 2)
        """
        self._check_if_adapted()
        if self._encoded is None:
            preprocessed = self._preprocess(self._symbolic_inputs)
            self._make_encoders()
            self._encoded = self._merge(preprocessed, self._cross(preprocessed))
        return self._encoded

    def _preprocess(self, columns):
        return {key: self.preprocessors[key](columns[key]) for key in self.features}

    def _cross(self, preprocessed):
        return {
            cross.name: self.crossers[cross.name]([preprocessed[f] for f in cross.feature_names])
            for cross in self.crosses
        }

    def _make_encoders(self):
        specs = {**self.features, **self.crosses_by_name}
        for key, spec in specs.items():
            if spec.output_mode == "one_hot" and key not in self.one_hot_encoders:
                layer = self.preprocessors.get(key) or self.crossers.get(key)
                self.one_hot_encoders[key] = CategoryEncoding(
                    num_tokens=cardinality(key, layer), output_mode="multi_hot"
                )
        if self.output_mode == "concat" and self.concat is None:
            self.concat = Concatenate(axis=-1)

    def _merge(self, preprocessed, crossed):
        encoded = {}
        for key in [*sorted(preprocessed), *sorted(crossed)]:
            value = preprocessed[key] if key in preprocessed else crossed[key]
            encoder = self.one_hot_encoders.get(key)
            encoded[key] = value if encoder is None else encoder(value)
        if self.output_mode == "dict":
            return encoded
        for key, value in encoded.items():
            if not str(value.dtype).startswith("float"):
                raise ValueError(
                    f"FeatureSpace '{self.name}': cannot concatenate feature '{key}', which is "
                    f"not encoded (it has dtype {value.dtype}); use output_mode='dict', or "
                    "output_mode='one_hot' for the feature"
                )
        values = list(encoded.values())
        return values[0] if len(values) == 1 else self.concat(values)

    def __call__(self, data):
        """Encodes a dict of feature arrays: a batch, or one sample of scalars.

        Args:
            data: a dict of feature name -> array (`(batch,)` or `(batch, 1)`) or scalar.

        Returns:
            A Tensor (`"concat"`) or a dict of Tensors (`"dict"`); one sample
            of scalars loses its batch axis.

        Raises:
            ValueError: if the space must be adapted first, or for data that
                is not a dict of its features with equal numbers of samples.
            TypeError: for values of the wrong kind.

        Example:
            >>> space = mk.utils.FeatureSpace({"x": "float", "y": "float"})
            >>> space({"x": 1.0, "y": 2.0}).numpy()
            array([1., 2.], dtype=float32)
        """
        self._check_if_built()
        columns, single = call_columns(data, self.features)
        preprocessed = self._preprocess(columns)
        merged = self._merge(preprocessed, self._cross(preprocessed))
        if not single:
            return merged
        if isinstance(merged, dict):
            return {key: Tensor(value.numpy()[0]) for key, value in merged.items()}
        return Tensor(merged.numpy()[0])

    # ---------------------------------------------------------------- saving

    def get_config(self):
        return {
            "name": self.name,
            "features": {key: entry_of(f) for key, f in self.features.items()},
            "output_mode": self.output_mode,
            "crosses": [entry_of(cross) for cross in self.crosses],
            "crossing_dim": self.crossing_dim,
            "hashing_dim": self.hashing_dim,
            "num_discretization_bins": self.num_discretization_bins,
        }

    def build_from_config(self, config):
        # {"input_shape": {feature: shape}} as written here, or Keras's {feature: build config}.
        shapes = (config or {}).get("input_shape")
        if isinstance(shapes, dict):
            config = {key: {"input_shape": shape} for key, shape in shapes.items()}
        for key, build_config in (config or {}).items():
            preprocessor = self.preprocessors[key]
            if not preprocessor.built and build_config:
                preprocessor.build_from_config(build_config)
        self._is_adapted = True  # (the adapted state comes with the weights and the configs)
        self._check_if_built()

    def save(self, filepath):
        """Saves the space (configs and adapted state) to a file `mk.saving.load_model` reads.

        As `mk.saving.save_model`: a `.keras` path gets Keras's zip layout. Whether
        Keras loads it is not checked (Keras's FeatureSpace needs TensorFlow).

        Args:
            filepath: the path (`.minikeras` is the suggested suffix).

        Returns:
            None.

        Example:
            >>> import tempfile, pathlib
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "space.minikeras"
            >>> space = mk.utils.FeatureSpace({"x": "float_normalized"})
            >>> space.adapt({"x": [0.0, 2.0]}, verbose=0)
            >>> space.save(path)
            >>> mk.saving.load_model(path)({"x": [4.0]}).numpy()
            array([[3.]], dtype=float32)
        """
        from minikeras.saving import save_model

        save_model(self, filepath)

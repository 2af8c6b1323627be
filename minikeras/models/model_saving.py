"""`ModelSaving`: the part of `Model` that turns it into configs, JSON and files.

`get_config` / `from_config` (a functional model's layers and calls),
`to_json`, and `save`, `save_weights`, `load_weights`, which hand over to
`minikeras.saving`. `Model` inherits it; it is not used on its own.
"""

__all__ = ["ModelSaving"]


class ModelSaving:
    """The config and file methods of `Model` (see the module)."""

    def get_config(self):
        """A functional model's layers and calls; a subclassed model's base config only.

        A subclassed model whose constructor takes arguments overrides this to
        return them (see `minikeras.saving`).

        Returns:
            A JSON-friendly dict (see `minikeras.saving.functional`).

        Example:
            >>> mk.Model(name="m").get_config()["name"]
            'm'
        """
        if self._inputs is not None:
            from minikeras.saving.functional import functional_config
            from minikeras.saving.registry import nested_configs

            with nested_configs():  # a custom layer is rebuilt with from_config's custom_objects
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
            >>> model = mk.Model(x, Dense(2)(x))
            >>> mk.Model.from_config(model.get_config())(np.ones((1, 3))).shape
            (1, 2)
        """
        if "layers" in config and "input_layers" in config:
            from minikeras.saving.functional import functional_from_config

            return functional_from_config(cls, config, custom_objects)
        return cls(**config)

    def to_json(self, **kwargs):
        """The model's architecture (no weights) as JSON, for `models.model_from_json`.

        As Keras's, it describes custom classes that are not registered too:
        `model_from_json(text, custom_objects={...})` rebuilds them (as
        `load_model` does for a file written by `save`).

        Args:
            **kwargs: passed to `json.dumps` (`indent=2`, ...).

        Returns:
            A JSON string: `{"module", "class_name", "config", "registered_name", ...}`.

        Raises:
            ValueError: if a config is not JSON (see `minikeras.saving`).

        Example:
            >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
            >>> import json; json.loads(model.to_json())["class_name"]
            'Sequential'
        """
        import json

        from minikeras.saving import serialize_layer
        from minikeras.saving.registry import nested_configs

        with nested_configs():
            return json.dumps(serialize_layer(self), **kwargs)

    def save(self, filepath, overwrite=True, zipped=None):
        """Saves the architecture, the weights and the training state in one file.

        See `minikeras.saving.save_model`: the write is atomic, and a model
        that cannot be rebuilt from its config (a subclassed one) is refused
        with a message that says to save its weights instead.

        Args:
            filepath: the path (`.minikeras` is the suggested suffix).
            overwrite: if False, an existing file is an error.
            zipped: None or True: one zip file (Keras's unzipped directory,
                `zipped=False`, is refused).

        Returns:
            None.

        Raises:
            ValueError: if the model is not built or cannot be rebuilt from its config.
            FileExistsError: if the file exists and `overwrite` is False.
            NotImplementedError: for `zipped=False`.

        Example:
            >>> import tempfile, pathlib
            >>> from minikeras.layers import Dense, Input
            >>> x = Input((3,))
            >>> model = mk.Model(x, Dense(2)(x))
            >>> model.save(pathlib.Path(tempfile.mkdtemp()) / "model.minikeras")
        """
        from minikeras import saving

        saving.save_model(self, filepath, overwrite=overwrite, zipped=zipped)

    def save_weights(self, filepath, overwrite=True, max_shard_size=None):
        """Saves the weights, keyed by their tracked paths (see `minikeras.saving.save_weights`).

        Args:
            filepath: the path (`.weights.minikeras` is the suggested suffix).
            overwrite: if False, an existing file is an error.
            max_shard_size: None only (Keras's sharded files are not written).

        Returns:
            None.

        Raises:
            ValueError: if the model is not built.
            FileExistsError: if the file exists and `overwrite` is False.
            NotImplementedError: for a `max_shard_size` other than None.

        Example:
            >>> import tempfile, pathlib
            >>> from minikeras import Sequential
            >>> from minikeras.layers import Dense, Input
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "mlp.weights.minikeras"
            >>> Sequential([Input((3,)), Dense(2)]).save_weights(path)
        """
        from minikeras import saving

        saving.save_weights(self, filepath, overwrite=overwrite, max_shard_size=max_shard_size)

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

"""Models: `Model` (subclassed or functional) and `Sequential`."""

from minikeras.models.cloning import clone_model, model_from_json
from minikeras.models.model import Model
from minikeras.models.sequential import Sequential

__all__ = ["Model", "Sequential", "clone_model", "load_model", "model_from_json", "save_model"]


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002
    """Loads a model saved with `Model.save` (this is `minikeras.saving.load_model`).

    Args:
        filepath: the path.
        custom_objects: optional dict of name -> class or function, for
            classes and functions that are not registered.
        compile: restore the training state (compile arguments, optimizer
            state, random states), if the file has one.
        safe_mode: accepted for Keras's signature; minikeras never runs code
            from a file, so False changes nothing.

    Returns:
        The model.

    Raises:
        minikeras.saving.LoadError: listing every problem with the file.
        OSError: if the file cannot be opened.

    Example:
        >>> import tempfile, pathlib
        >>> from minikeras.layers import Dense, Input
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.minikeras"
        >>> mk.Sequential([Input((3,)), Dense(2, name="out")]).save(path)
        >>> mk.models.load_model(path).layers[0].name
        'out'
    """
    # Imported here: saving sits above models in the import graph.
    from minikeras import saving

    return saving.load_model(
        filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode
    )


def save_model(model, filepath, overwrite=True, zipped=None):
    """Saves a model, architecture, weights and training state (`minikeras.saving.save_model`).

    Args:
        model: a built Sequential or functional model, or a registered
            subclassed model that can be rebuilt from its config.
        filepath: the path (`.keras` for Keras 3's format, `.minikeras` for
            minikeras's own).
        overwrite: if False, an existing file is an error.
        zipped: None or True: one zip file (Keras's unzipped directory,
            `zipped=False`, is refused).

    Returns:
        None.

    Raises:
        ValueError: if the model is not built, or cannot be rebuilt from its config.
        FileExistsError: if the file exists and `overwrite` is False.
        NotImplementedError: for `zipped=False`.

    Example:
        >>> import tempfile, pathlib
        >>> from minikeras.layers import Dense, Input
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.keras"
        >>> mk.models.save_model(mk.Sequential([Input((3,)), Dense(2, name="out")]), path)
        >>> mk.models.load_model(path).layers[0].name
        'out'
    """
    # Imported here: saving sits above models in the import graph.
    from minikeras import saving

    return saving.save_model(model, filepath, overwrite=overwrite, zipped=zipped)

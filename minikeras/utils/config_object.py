"""`Config`: a dict of named values read and set as attributes, which can be frozen."""

import copy
import difflib
import json

__all__ = ["Config"]

# The names that are the object's own, never entries (everything a Config has on its class).
_OWN = frozenset({"_config", "_frozen"})


class Config:
    """A dict of named values, read and set as attributes or items, that can be frozen.

    `config.seed = 1` and `config["seed"] = 1` set the same entry;
    `config.seed` and `config["seed"]` read it. It behaves as a dict
    (`keys`, `values`, `items`, `get`, `pop`, `update`, `len`, `in`;
    iterating gives the keys sorted, as in Keras), turns into one with
    `as_dict`, and into JSON with `to_json`. After `freeze()`, every change
    raises until `unfreeze()`. Names of the class's own attributes and
    methods (`keys`, `frozen`, ...) are not entries: set them as items.

    Args:
        **kwargs: the first entries.

    Raises:
        AttributeError: on reading an attribute that is no entry (naming the
            closest entry, if one is close).
        ValueError: on changing a frozen config.

    Example:
        >>> config = mk.utils.Config(learning_rate=0.1, momentum=0.9)
        >>> config.seed = 123
        >>> config["learning_rate"], config.seed, sorted(config)
        (0.1, 123, ['learning_rate', 'momentum', 'seed'])
        >>> config.freeze()
        >>> config.seed = 1
        Traceback (most recent call last):
        ...
        ValueError: Cannot change the config: it is frozen (call unfreeze() first)
    """

    def __init__(self, **kwargs):
        object.__setattr__(self, "_config", dict(kwargs))
        object.__setattr__(self, "_frozen", False)

    @property
    def frozen(self):
        """Whether the config is frozen (changes raise)."""
        return self._frozen

    def freeze(self):
        """Freezes the config: any later change raises a `ValueError`.

        Returns:
            None.

        Example:
            >>> config = mk.utils.Config(a=1)
            >>> config.freeze(); config.frozen
            True
        """
        object.__setattr__(self, "_frozen", True)

    def unfreeze(self):
        """Allows changes again after `freeze`.

        Returns:
            None.

        Example:
            >>> config = mk.utils.Config(a=1)
            >>> config.freeze(); config.unfreeze(); config.a = 2; config.a
            2
        """
        object.__setattr__(self, "_frozen", False)

    def _check_not_frozen(self):
        if self._frozen:
            raise ValueError("Cannot change the config: it is frozen (call unfreeze() first)")

    def as_dict(self):
        """Returns the entries as a new (shallow-copied) dict.

        Returns:
            A dict.

        Example:
            >>> mk.utils.Config(a=1, b=2).as_dict()
            {'a': 1, 'b': 2}
        """
        return copy.copy(self._config)

    def to_json(self):
        """Returns the entries as a JSON string.

        Returns:
            A string.

        Raises:
            TypeError: if a value is not JSON-serializable.

        Example:
            >>> mk.utils.Config(a=1, b=[2, 3]).to_json()
            '{"a": 1, "b": [2, 3]}'
        """
        return json.dumps(self._config)

    def keys(self):
        """The entries' names, as `dict.keys()` (in insertion order).

        Returns:
            A dict keys view.

        Example:
            >>> list(mk.utils.Config(b=1, a=2).keys())
            ['b', 'a']
        """
        return self._config.keys()

    def values(self):
        """The entries' values, as `dict.values()`.

        Returns:
            A dict values view.

        Example:
            >>> list(mk.utils.Config(b=1, a=2).values())
            [1, 2]
        """
        return self._config.values()

    def items(self):
        """The `(name, value)` pairs, as `dict.items()`.

        Returns:
            A dict items view.

        Example:
            >>> list(mk.utils.Config(b=1).items())
            [('b', 1)]
        """
        return self._config.items()

    def get(self, keyname, value=None):
        """The entry `keyname`, or `value` if there is none (as `dict.get`).

        Args:
            keyname: the entry's name.
            value: what to return when there is no such entry.

        Returns:
            The entry's value, or `value`.

        Example:
            >>> mk.utils.Config(a=1).get("b", 0)
            0
        """
        return self._config.get(keyname, value)

    def pop(self, *args):
        """Removes an entry and returns its value (as `dict.pop`).

        Args:
            *args: the name, and optionally a default for a missing entry.

        Returns:
            The removed value (or the default).

        Raises:
            KeyError: for a missing entry without a default.
            ValueError: if the config is frozen.

        Example:
            >>> config = mk.utils.Config(a=1)
            >>> config.pop("a"), len(config)
            (1, 0)
        """
        self._check_not_frozen()
        return self._config.pop(*args)

    def update(self, *args, **kwargs):
        """Sets entries from a dict or keyword arguments (as `dict.update`).

        Args:
            *args: a dict or iterable of pairs, as `dict.update` takes.
            **kwargs: more entries.

        Returns:
            None.

        Raises:
            ValueError: if the config is frozen.

        Example:
            >>> config = mk.utils.Config(a=1)
            >>> config.update({"b": 2}, c=3); config.as_dict()
            {'a': 1, 'b': 2, 'c': 3}
        """
        self._check_not_frozen()
        self._config.update(*args, **kwargs)

    def __getattr__(self, name):  # (only called for names that are not the object's own)
        if name in _OWN or name.startswith("__"):
            raise AttributeError(name)
        config = self._config
        if name in config:
            return config[name]
        message = f"Unknown attribute: {name!r}."
        close = difflib.get_close_matches(name, [str(key) for key in config], n=1, cutoff=0.7)
        if close:
            message += f" Did you mean {close[0]!r}?"
        raise AttributeError(message)

    def __setattr__(self, name, value):
        if name in _OWN or hasattr(type(self), name):
            raise AttributeError(
                f"Config: {name!r} is an attribute of Config itself; set it as an item, "
                f"config[{name!r}] = ..."
            )
        self._check_not_frozen()
        self._config[name] = value

    def __delattr__(self, name):
        if name not in self._config:
            raise AttributeError(f"Unknown attribute: {name!r}.")
        del self[name]

    def __setitem__(self, key, value):
        self._check_not_frozen()
        self._config[key] = value

    def __getitem__(self, key):
        return self._config[key]

    def __delitem__(self, key):
        self._check_not_frozen()
        del self._config[key]

    def __contains__(self, key):
        return key in self._config

    def __iter__(self):
        return iter(sorted(self._config))

    def __len__(self):
        return len(self._config)

    def __repr__(self):
        return f"<Config {self._config}>"

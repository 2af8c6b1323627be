"""Keras's global switches: unsafe deserialization, interactive logging, traceback filtering.

`keras.config` has them; code written for Keras flips them. In minikeras:

- interactive logging decides where the progress of `fit`, `evaluate` and
  `predict`, `Progbar`'s lines and the callbacks' messages (early stopping,
  checkpoints, learning-rate changes) go: standard output, or (disabled)
  the `logging` logger `"minikeras"` at level INFO, one record per line, as
  Keras sends them to absl logging;
- traceback filtering and unsafe deserialization have nothing to switch:
  minikeras never hides frames of a traceback, and never runs code from a
  saved file (a `Lambda` of a Python lambda cannot be saved). The settings
  are remembered for code that reads them back.
"""

import logging
import sys

__all__ = [
    "disable_interactive_logging",
    "disable_traceback_filtering",
    "enable_interactive_logging",
    "enable_traceback_filtering",
    "enable_unsafe_deserialization",
    "is_interactive_logging_enabled",
    "is_traceback_filtering_enabled",
    "print_line",
]

_SETTINGS = {"interactive_logging": True, "traceback_filtering": True, "unsafe": False}


def enable_interactive_logging():
    """Sends progress lines to standard output (the default).

    Returns:
        None.

    Example:
        >>> mk.config.enable_interactive_logging()
        >>> mk.config.is_interactive_logging_enabled()
        True
    """
    _SETTINGS["interactive_logging"] = True


def disable_interactive_logging():
    """Sends progress lines to the `logging` logger `"minikeras"` (INFO) instead of the terminal.

    For jobs whose output is a log file rather than a terminal: no progress
    bar is drawn, and each epoch's line is a log record.

    Returns:
        None.

    Example:
        >>> mk.config.disable_interactive_logging()
        >>> mk.config.is_interactive_logging_enabled()
        False
        >>> mk.config.enable_interactive_logging()
    """
    _SETTINGS["interactive_logging"] = False


def is_interactive_logging_enabled():
    """Returns whether progress lines go to standard output (True) or to `logging` (False).

    Returns:
        A bool, True by default.

    Example:
        >>> mk.config.is_interactive_logging_enabled()
        True
    """
    return _SETTINGS["interactive_logging"]


def enable_traceback_filtering():
    """Remembers that traceback filtering is wanted; minikeras never filters tracebacks.

    Keras hides its own frames from tracebacks when this is on (the
    default). minikeras's stack is short enough to read whole, so nothing
    changes; `is_traceback_filtering_enabled` reports the setting.

    Returns:
        None.

    Example:
        >>> mk.config.enable_traceback_filtering()
        >>> mk.config.is_traceback_filtering_enabled()
        True
    """
    _SETTINGS["traceback_filtering"] = True


def disable_traceback_filtering():
    """Remembers that traceback filtering is not wanted; tracebacks are always whole here.

    Returns:
        None.

    Example:
        >>> mk.config.disable_traceback_filtering()
        >>> mk.config.is_traceback_filtering_enabled()
        False
        >>> mk.config.enable_traceback_filtering()
    """
    _SETTINGS["traceback_filtering"] = False


def is_traceback_filtering_enabled():
    """Returns the traceback-filtering setting (True by default, as in Keras).

    Returns:
        A bool. It changes nothing in minikeras, whose tracebacks are whole.

    Example:
        >>> mk.config.is_traceback_filtering_enabled()
        True
    """
    return _SETTINGS["traceback_filtering"]


def enable_unsafe_deserialization():
    """Allows loading files that run code, in Keras; minikeras loads none, so nothing changes.

    Keras refuses `Lambda` layers of Python lambdas in a `.keras` file unless
    this (or `safe_mode=False`) is given. minikeras never runs code from a
    file: such a model cannot be saved, and a named function in a `Lambda`
    is found by its registered name.

    Returns:
        None.

    Example:
        >>> mk.config.enable_unsafe_deserialization()
    """
    _SETTINGS["unsafe"] = True


def print_line(line, file=None):
    """Writes one line of progress: to `file` (standard output by default), or to `logging`.

    With interactive logging disabled the line is an INFO record of the
    logger `"minikeras"` instead (as Keras's `io_utils.print_msg` does with
    absl logging).

    Args:
        line: the text, without its newline.
        file: where to write when logging is interactive; None means standard output.

    Returns:
        None.

    Example:
        >>> mk.switches.print_line("epoch 1 - loss: 0.5")
        epoch 1 - loss: 0.5
    """
    if _SETTINGS["interactive_logging"]:
        print(line, file=file or sys.stdout, flush=True)
    else:
        logging.getLogger("minikeras").info(line)

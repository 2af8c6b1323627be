"""Progress display for `fit`, `evaluate` and `predict`.

With `verbose=1` a tqdm bar shows the step count, elapsed time, ETA and the
running loss and metrics (tqdm is the `progress` extra: `pip install
minikeras[progress]`; without it, one line per epoch is printed instead).
With `verbose=2`, one line per epoch; with `verbose=0`, nothing. With
`mk.config.disable_interactive_logging()`, no bar: each line is a `logging`
record of the logger `"minikeras"` instead.
"""

import sys
import time

import numpy as np

from minikeras import switches

__all__ = ["Progress", "format_logs"]

_NOT_LOOKED_UP = object()
# tqdm's bar class (`tqdm.auto.tqdm`), imported at the first bar: importing tqdm takes
# about 0.1 s, which a script that never shows a bar need not pay. None without the extra.
tqdm = _NOT_LOOKED_UP


def _bar_class():
    """`tqdm`, imported the first time a bar is shown; None if the extra is not installed."""
    global tqdm
    if tqdm is _NOT_LOOKED_UP:
        try:
            from tqdm.auto import tqdm as found
        except ImportError:  # the optional extra is not installed
            found = None
        tqdm = found
    return tqdm


def format_logs(logs):
    """Formats logs as Keras does: `loss: 0.1234 - accuracy: 0.9500`.

    Args:
        logs: a dict of name -> number.

    Returns:
        A string.

    Example:
        >>> mk.progress.format_logs({"loss": 0.25, "accuracy": 0.5})
        'loss: 0.2500 - accuracy: 0.5000'
    """
    return " - ".join(f"{key}: {_format(value)}" for key, value in logs.items())


def _format(value):
    """A float to 4 decimals; a per-class array as its values, each to 4 decimals."""
    if isinstance(value, float) or getattr(value, "ndim", 1) == 0:
        return f"{float(value):.4f}"
    return "[" + " ".join(f"{float(v):.4f}" for v in np.ravel(value)) + "]"


class Progress:
    """One epoch's (or one evaluation's) progress display.

    Args:
        total: the number of steps, or None if unknown.
        verbose: 0 (silent), 1 (a bar, updated each step) or 2 (one line at the end).
        description: the text in front, such as `"Epoch 3/10"`.
        file: where to write; standard error for the bar, standard output for lines.

    Example:
        >>> import sys
        >>> bar = mk.progress.Progress(total=2, verbose=2, description="Epoch 1/1", file=sys.stdout)
        >>> bar.update({"loss": 0.5}); bar.update({"loss": 0.25})
        >>> bar.close({"loss": 0.375})  # doctest: +ELLIPSIS
        Epoch 1/1 - ...s - loss: 0.3750
    """

    def __init__(self, total, verbose, description, file=None):
        self.verbose = verbose
        self.description = description
        self.file = file
        self.start = time.perf_counter()
        self.bar = None
        bar_class = None
        if verbose == 1 and switches.is_interactive_logging_enabled():
            bar_class = _bar_class()
        if bar_class is not None:
            self.bar = bar_class(
                total=total,
                desc=description,
                unit="step",
                file=file or sys.stderr,
                dynamic_ncols=True,
                leave=True,
            )

    def update(self, logs=None):
        """Advances one step and shows the running logs.

        Args:
            logs: a dict of running averages, or None.

        Returns:
            None.

        Example:
            >>> mk.progress.Progress(total=1, verbose=0, description="").update({"loss": 1.0})
        """
        if self.bar is not None:
            # The logs first: update() redraws, and should show this step's figures.
            if logs:
                self.bar.set_postfix_str(format_logs(logs), refresh=False)
            self.bar.update(1)

    def close(self, logs=None):
        """Ends the display, showing the final logs.

        Args:
            logs: the final logs (for an epoch: with validation figures).

        Returns:
            None.

        Example:
            >>> mk.progress.Progress(total=1, verbose=0, description="").close({"loss": 1.0})
        """
        if self.bar is not None:
            if logs:
                self.bar.set_postfix_str(format_logs(logs), refresh=False)
            self.bar.close()
        elif self.verbose:
            elapsed = time.perf_counter() - self.start
            took = f"{elapsed * 1000:.0f}ms" if elapsed < 1 else f"{elapsed:.1f}s"
            line = f"{self.description} - {took}"
            if logs:
                line += " - " + format_logs(logs)
            switches.print_line(line, self.file)

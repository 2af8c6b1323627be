"""`Progbar`: the text progress bar of `keras.utils`, for custom loops.

`fit` draws its own display (`minikeras.progress`); `Progbar` is the
stand-alone bar a training loop written by hand updates itself.
"""

import math
import sys
import time

import numpy as np

from minikeras import switches

__all__ = ["Progbar"]


class Progbar:
    """A text progress bar with running averages of the values it is given.

    Values named in `stateful_metrics` are shown as given; all others are
    averaged over the steps seen, each update weighing as many steps as it
    advanced (as Keras does). Output goes to standard output: with
    `verbose=1` a bar redrawn in place (on a terminal; a line per draw
    otherwise) at most every `interval` seconds and at the end; with
    `verbose=2` one line at the end; with `verbose=0` nothing.

    Args:
        target: the total number of steps, or None if unknown.
        width: the bar's width in characters.
        verbose: 0 (silent), 1 (a bar) or 2 (one line at the end).
        interval: the least number of seconds between two draws.
        stateful_metrics: names of values shown as they are (not averaged).
        stateless_metrics: alternatively, the names of the values to average
            (all others are shown as they are); give at most one of the two.
        unit_name: what a step is called in the timing (`"step"`, `"sample"`).

    Raises:
        ValueError: if both `stateful_metrics` and `stateless_metrics` are given.

    Example:
        >>> bar = mk.utils.Progbar(target=4, verbose=2)
        >>> bar.update(2, values=[("loss", 1.0)])
        >>> bar.add(2, values=[("loss", 0.5)])  # doctest: +ELLIPSIS
        4/4 - 0s - ...s/step - loss: 0.7500
    """

    def __init__(
        self,
        target,
        width=20,
        verbose=1,
        interval=0.05,
        stateful_metrics=None,
        stateless_metrics=None,
        unit_name="step",
    ):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError(
                "Progbar: give stateful_metrics (names shown as they are) or "
                "stateless_metrics (names averaged), not both"
            )
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stateful_metrics = (
            None if stateless_metrics is not None else set(stateful_metrics or ())
        )
        self.stateless_metrics = None if stateless_metrics is None else set(stateless_metrics)
        self._dynamic_display = (
            hasattr(sys.stdout, "isatty")
            and sys.stdout.isatty()
            and switches.is_interactive_logging_enabled()
        )
        self._seen_so_far = 0
        self._values = {}  # name -> [weighted sum, steps]; insertion order is display order
        self._start = time.time()
        self._last_update = 0.0
        self._time_after_first_step = None
        self._previous_width = 0

    def _averaged(self, name):
        if self.stateful_metrics is not None:
            return name not in self.stateful_metrics
        return name in self.stateless_metrics

    def update(self, current, values=None, finalize=None):
        """Moves the bar to step `current` and records `values` for the last steps.

        Args:
            current: the index of the step reached.
            values: a list of `(name, value)` pairs for the steps since the
                last update.
            finalize: whether this is the last update; None means
                `current >= target`.

        Example:
            >>> bar = mk.utils.Progbar(target=2, verbose=0)
            >>> bar.update(1, [("acc", 0.5)]); bar.update(2, [("acc", 1.0)])
            >>> bar.averages()
            {'acc': 0.75}
        """
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in values or ():
            if not self._averaged(name):
                self._values[name] = [value, 1]
            elif finalize and current == self._seen_so_far:
                self._values[name] = [value, 1]  # an end-of-epoch value for no new steps
            else:
                steps = max(current - self._seen_so_far, 1)
                total, count = self._values.get(name, [0.0, 0])
                self._values[name] = [total + value * steps, count + steps]
        self._seen_so_far = current
        now = time.time()
        per_step = self._step_duration(current, now)
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            self._draw(current, now, per_step, finalize)
        elif self.verbose == 2 and finalize:
            count = self._count(current) if self.target else f"{current}"
            line = f"{count} - {now - self._start:.0f}s -{self._format_time(per_step)}"
            switches.print_line(line + self._format_values())
        self._last_update = now

    def add(self, n, values=None):
        """Advances the bar by `n` steps (see `update`).

        Args:
            n: the number of steps done since the last update.
            values: a list of `(name, value)` pairs for those steps.

        Example:
            >>> bar = mk.utils.Progbar(target=None, verbose=0)
            >>> bar.add(3); bar.add(2); bar._seen_so_far
            5
        """
        self.update(self._seen_so_far + n, values)

    def averages(self):
        """Returns the values as displayed: averages, or the last value of stateful ones.

        Returns:
            A dict of name -> float.

        Example:
            >>> bar = mk.utils.Progbar(target=3, verbose=0, stateful_metrics=["lr"])
            >>> bar.update(1, [("lr", 0.1), ("loss", 3.0)])  # one step
            >>> bar.update(3, [("lr", 0.2), ("loss", 0.0)])  # two steps
            >>> bar.averages()
            {'lr': 0.2, 'loss': 1.0}
        """
        return {
            name: float(np.mean(total)) / max(1, count)
            for name, (total, count) in self._values.items()
        }

    def _count(self, current):
        digits = int(math.log10(self.target)) + 1
        return f"{current:{digits}d}/{self.target}"

    def _draw(self, current, now, per_step, finalize):
        if self.target:
            done = int(self.width * min(current / self.target, 1.0))
            arrow = ">" if done < self.width else ""
            rest = "." * (self.width - done - len(arrow))
            bar = f"{self._count(current)} [{'=' * done}{arrow}{rest}]"
        else:
            bar = f"{current:7d}/Unknown"
        if self.target and not finalize:
            info = f" - ETA: {self._format_eta(per_step * (self.target - current))}"
        else:
            info = f" - {now - self._start:.0f}s"
        info += self._format_time(per_step) + self._format_values()
        line = bar + info
        padding = ""
        if self._dynamic_display:  # blank out the rest of a longer previous line
            padding = " " * max(self._previous_width - len(line), 0)
        prefix = "\r" if self._dynamic_display else ""
        if self._dynamic_display and not finalize:
            sys.stdout.write(prefix + line + padding)
            sys.stdout.flush()
        else:
            switches.print_line(prefix + line + padding)
        self._previous_width = len(line)

    def _format_values(self):
        text = ""
        for name, average in self.averages().items():
            text += (
                f" - {name}: {average:.4f}" if abs(average) > 1e-3 else f" - {name}: {average:.4e}"
            )
        return text

    @staticmethod
    def _format_eta(seconds):
        if seconds > 3600:
            return f"{seconds // 3600:.0f}:{(seconds % 3600) // 60:02.0f}:{seconds % 60:02.0f}"
        if seconds > 60:
            return f"{seconds // 60:.0f}:{seconds % 60:02.0f}"
        return f"{seconds:.0f}s"

    def _format_time(self, per_step):
        if per_step >= 1 or per_step == 0:
            return f" {per_step:.0f}s/{self.unit_name}"
        if per_step >= 1e-3:
            return f" {per_step * 1e3:.0f}ms/{self.unit_name}"
        return f" {per_step * 1e6:.0f}us/{self.unit_name}"

    def _step_duration(self, current, now):
        """Seconds per step, leaving out the first (slow, warming-up) step once there are more."""
        if not current:
            return 0.0
        if self._time_after_first_step is not None and current > 1:
            per_step = (now - self._time_after_first_step) / (current - 1)
        else:
            per_step = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return per_step

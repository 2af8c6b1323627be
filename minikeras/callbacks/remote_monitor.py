"""`RemoteMonitor`: posts each epoch's logs, as JSON, to a web server."""

import json
import warnings

import numpy as np

from minikeras.callbacks.base import Callback

__all__ = ["RemoteMonitor"]


def _requests():
    try:
        import requests
    except ImportError:
        raise ImportError(
            "RemoteMonitor: posting the logs needs the `requests` package, which is not "
            "installed: pip install requests (or minikeras[remote])"
        ) from None
    return requests


class RemoteMonitor(Callback):
    """Posts each epoch's logs, as JSON, to `root + path` with an HTTP POST.

    At each epoch's end it sends `{"epoch": epoch, **logs}` (numpy numbers
    as Python ones): as the JSON body when `send_as_json` (content type
    `application/json`), else as the form field `field` holding the JSON
    text, as Keras does. A server that cannot be reached gives a warning, not
    an error. It needs the `requests` package, an optional dependency of
    minikeras: without it, training stops with an `ImportError` at its start
    (Keras raises at the first epoch's end).

    Args:
        root: the server's root URL.
        path: the path, after `root`, that the logs are posted to.
        field: the form field holding the JSON (without `send_as_json`).
        headers: None, or a dict of HTTP headers to send.
        send_as_json: send the logs as the JSON body instead of in a form.

    Raises:
        ImportError: when training starts (or an epoch ends), if `requests`
            is not installed.

    Example:
        >>> monitor = mk.callbacks.RemoteMonitor(root="http://localhost:9000", send_as_json=True)
        >>> monitor.root + monitor.path
        'http://localhost:9000/publish/epoch/end/'
    """

    def __init__(
        self,
        root="http://localhost:9000",
        path="/publish/epoch/end/",
        field="data",
        headers=None,
        send_as_json=False,
    ):
        super().__init__()
        self.root = root
        self.path = path
        self.field = field
        self.headers = headers
        self.send_as_json = send_as_json

    def on_train_begin(self, logs=None):
        _requests()  # (fail before the first step, not after the first epoch)

    def on_epoch_end(self, epoch, logs=None):
        requests = _requests()
        sent = {"epoch": epoch}
        for key, value in (logs or {}).items():
            sent[key] = value.item() if isinstance(value, (np.ndarray, np.generic)) else value
        url = self.root + self.path
        try:
            if self.send_as_json:
                requests.post(url, json=sent, headers=self.headers)
            else:
                requests.post(url, {self.field: json.dumps(sent)}, headers=self.headers)
        except requests.exceptions.RequestException:
            warnings.warn(f"Could not reach RemoteMonitor root server at {self.root}", stacklevel=2)

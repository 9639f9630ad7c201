"""HTTP client of ``coordbench des serve`` (standard library only).

Every call raises :class:`ServerError` when the server answers an error
status, and :class:`ConnectionError` (a builtin) when it cannot be reached;
the message carries the server's own explanation.
"""

import json
import urllib.error
import urllib.request


class ServerError(Exception):
    """The server refused a request: ``code`` is the HTTP status,
    ``message`` the server's explanation."""

    def __init__(self, code, message, path=""):
        super().__init__(f"coordbench server: {path}: {code} {message}")
        self.code = code
        self.message = message
        self.path = path


class ItemError(ServerError):
    """One item of a batched request failed (the others may have worked);
    ``consumed`` says that the pending decision was used up anyway."""

    def __init__(self, code, message, episode_id="", consumed=False):
        super().__init__(code, message, "episode " + episode_id)
        self.episode_id = episode_id
        self.consumed = consumed


class Client:
    """A thin client of the environment server's /v1 API.

    base_url is the server's root (``http://127.0.0.1:8765``); token, if
    set, is sent as a bearer token. Only loopback or explicitly given URLs
    are contacted; nothing is read from the environment here.
    """

    def __init__(self, base_url, token=None, timeout=60.0):
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        if self.base_url.endswith("/v1"):
            self.base_url = self.base_url[: -len("/v1")]
        self._token = token
        self.timeout = timeout

    def __repr__(self):
        # The token is never shown.
        return f"Client({self.base_url!r})"

    def call(self, method, path, body=None):
        """Send one request; return the decoded JSON answer (None when the
        answer is empty)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + "/v1" + path, method=method, data=data)
        req.add_header("Content-Type", "application/json")
        if self._token:
            req.add_header("Authorization", "Bearer " + self._token)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as err:
            raw = err.read()
            try:
                msg = json.loads(raw).get("error", "")
            except (ValueError, AttributeError):
                msg = raw[:200].decode("utf-8", "replace")
            raise ServerError(err.code, msg or err.reason, method + " " + path) from None
        except urllib.error.URLError as err:
            raise ConnectionError(f"coordbench server at {self.base_url} unreachable: {err.reason}") from None
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise ServerError(0, "the answer is not JSON", method + " " + path) from None

    def health(self):
        return self.call("GET", "/health")

    def batch_create(self, episodes):
        """POST /v1/batch/create: episodes is a list of {"instance",
        "paradigm", "seed"?}; returns the list of per-item results."""
        return self.call("POST", "/batch/create", {"episodes": episodes})["results"]

    def batch_step(self, items):
        """POST /v1/batch/step: items is a list of {"id", "step",
        "actions"} (no "actions": only fetch the pending decision)."""
        return self.call("POST", "/batch/step", {"items": items})["results"]

    def batch_delete(self, ids):
        """POST /v1/batch/delete: close and free episodes."""
        return self.call("POST", "/batch/delete", {"ids": list(ids)})["results"]

    def artifact(self, episode_id, name):
        """The text of an artifact of an ended episode (metrics.json, …)."""
        req_path = f"/episodes/{episode_id}/artifacts/{name}"
        req = urllib.request.Request(self.base_url + "/v1" + req_path)
        if self._token:
            req.add_header("Authorization", "Bearer " + self._token)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return resp.read().decode()
        except urllib.error.HTTPError as err:
            raise ServerError(err.code, err.read()[:200].decode("utf-8", "replace"), "GET " + req_path) from None

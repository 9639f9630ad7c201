"""HTTP client of ``coordbench des serve`` (standard library only).

Every call raises :class:`ServerError` when the server answers an error
status, and :class:`ConnectionError` (a builtin) when it cannot be reached;
the message carries the server's own explanation.
"""

import http.client
import json
import urllib.error
import urllib.request

# Bounds on what the client reads of one answer: a batch of decisions, and
# an artifact (a trace). A larger answer raises ServerError.
MAX_REPLY = 64 << 20
MAX_ARTIFACT = 1 << 30


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
        super().__init__(code, message, "episode " + episode_id if episode_id else "episode (not created)")
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
        raw = self._send(method, path, data, MAX_REPLY)
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise ServerError(0, "the answer is not JSON", method + " " + path) from None

    def _send(self, method, path, data, limit):
        """One request; the answer's bytes, at most limit of them (a
        larger answer is an error, not read whole)."""
        if path.startswith("/v1/"):  # a path written the way the API documents it
            path = path[len("/v1"):]
        req = urllib.request.Request(self.base_url + "/v1" + path, method=method, data=data)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self._token:
            req.add_header("Authorization", "Bearer " + self._token)
        where = method + " " + path
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read(limit + 1)
        except urllib.error.HTTPError as err:
            raw = err.read(64 << 10)
            try:
                msg = json.loads(raw).get("error", "")
            except (ValueError, AttributeError):
                msg = raw[:200].decode("utf-8", "replace")
            raise ServerError(err.code, msg or err.reason, where) from None
        except urllib.error.URLError as err:
            raise ConnectionError(f"coordbench server at {self.base_url} unreachable: {err.reason}") from None
        except (OSError, http.client.HTTPException) as err:  # a timeout or a cut answer, after the request went out
            raise ConnectionError(f"coordbench server at {self.base_url}: {where}: {err!r}") from None
        if len(raw) > limit:
            raise ServerError(0, f"the answer is larger than {limit} bytes", where)
        return raw

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

    def artifact(self, episode_id, name, limit=MAX_ARTIFACT):
        """The text of an artifact of an ended episode (metrics.json, …),
        of at most limit bytes."""
        return self._send("GET", f"/episodes/{episode_id}/artifacts/{name}", None, limit).decode()

    def episodes(self):
        """GET /v1/episodes: the status of every episode the server holds."""
        return self.call("GET", "/episodes")["episodes"]

    def cleanup(self, ids=None):
        """Close and free episodes left behind (a crashed learner's): the
        given ids, else every episode the server holds. Returns the ids
        freed. The server's slots are shared by every client of its token:
        call it only when no other learner uses the server."""
        if ids is None:
            ids = [e["id"] for e in self.episodes()]
        ids = list(ids)
        freed = []
        for i in range(0, len(ids), 64):  # within the server's default --max-batch
            for eid, r in zip(ids[i:i + 64], self.batch_delete(ids[i:i + 64])):
                if r.get("code") == 200:
                    freed.append(eid)
        return freed

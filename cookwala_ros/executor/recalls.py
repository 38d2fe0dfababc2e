"""Recall feed: `GET {catalog}/v1/recalls`, polled in a thread, cached in the database (CORE §6.8).

The feed answer may be a list of Recall documents or an object with a `recalls` (or `items`)
list. Each recall is schema-checked, and when trusted keys are configured its signature must
verify; the others are dropped with a note (an unverifiable recall must not block cooking, nor
be trusted to stop it). A poll that fails keeps the cached list: being offline never unblocks
a revision that was recalled. `on_update(recalls)` runs after each successful poll so the
service can stop running executions hit by a `block_and_stop_running` recall.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import httpx

from cookwala_ros.core.trust import verify_document

LOG = logging.getLogger("cookwala_ros.executor.recalls")


def usable_recalls(payload: object, keys: list[dict]) -> tuple[list[dict], list[str]]:
    """(recalls to apply, notes about the dropped ones) from a feed answer."""
    from cookwala_ros.core import schemas

    if isinstance(payload, dict):
        payload = payload.get("recalls", payload.get("items"))
    if not isinstance(payload, list):
        return [], ["the recall feed is not a list of recalls"]
    kept, notes = [], []
    for i, recall in enumerate(payload):
        issues = schemas.validate(recall, "Recall")
        if issues:
            notes.append(f"/{i}: not a valid Recall: {issues[0]}")
            continue
        if keys:
            verdict = verify_document(recall, keys)
            if not verdict:
                notes.append(f"/{i} ({recall.get('id')}): signature {verdict.reason}")
                continue
        kept.append(recall)
    return kept, notes


class RecallPoller:
    """Polls the feed every `interval_s` seconds in a daemon thread until `close()`."""

    def __init__(self, catalog_url: str, interval_s: float, keys: list[dict],
                 on_update: Callable[[list[dict]], None], timeout_s: float = 10.0):
        self.url = catalog_url.rstrip("/") + "/v1/recalls"
        self.interval_s = interval_s
        self.keys = keys
        self.on_update = on_update
        self.timeout_s = timeout_s
        self.last_error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll_once(self) -> list[dict] | None:
        """Fetch and apply the feed once; None when the fetch failed."""
        try:
            response = httpx.get(self.url, timeout=self.timeout_s,
                                 headers={"Accept": "application/vnd.cookwala+json, application/json"})
            response.raise_for_status()
            payload = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            self.last_error = f"{self.url}: {exc}"
            LOG.warning("recall poll failed: %s", self.last_error)
            return None
        recalls, notes = usable_recalls(payload, self.keys)
        for note in notes:
            LOG.warning("recall dropped: %s", note)
        self.last_error = None
        self.on_update(recalls)
        return recalls

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="recall-poller", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.poll_once()
            self._stop.wait(self.interval_s)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout_s + 1)

"""Constants and a POST helper shared by the HTTP API tests."""

from __future__ import annotations

import json
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
SOUP = REPO / "examples" / "recipes" / "tomato-soup.cookwala.json"
SOUP_REQUEST = REPO / "examples" / "requests" / "tomato-soup.execute.json"
MEDIA = "application/vnd.cookwala+json"
PROBLEM = "application/problem+json"
TOKEN = "s3cret-device-token"


def post(client, path, body, *, key=None, headers=None, media=MEDIA, same_body_key=True):
    """POST `body` (a dict as JSON, or raw bytes/str) with our media type and an optional key.

    With `same_body_key`, a dict body that has an idempotencyKey gets `key` there too.
    """
    sent = {"content-type": media, **(headers or {})}
    if key is not None:
        sent["Idempotency-Key"] = key
        if same_body_key and isinstance(body, dict) and "idempotencyKey" in body:
            body = {**body, "idempotencyKey": key}
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(path, content=data, headers=sent)

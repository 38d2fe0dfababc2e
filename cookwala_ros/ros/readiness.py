"""Whether the executor would start a cook now, as its diagnostics say.

Another process hearing the hob or an armed safety monitor does not mean the executor hears them:
each pair of ROS processes discovers the other on its own, and on a busy host that takes a while.
So whoever starts a cook on a kitchen that just came up (the demo, the tests, an integrator's
launch check) waits for the executor's own word. The executor reports it in its `/diagnostics`
status (`ready`, and `start_hold`: why not), at once when it changes and every second.
"""

from __future__ import annotations

READY_KEY = "ready"  # "true" when a cook would be started now
HOLD_KEY = "start_hold"  # why not: the executor's busy refusal detail
EXECUTOR_SUFFIX = ": executor"  # the executor's DiagnosticStatus.name ends so


def executor_readiness(msg, namespace: str = "/") -> tuple[bool, str] | None:
    """(ready, why not) of the executor in `namespace` from a DiagnosticArray, or None when the
    array holds no status of it. Its status is named "<node's full name>: executor"."""
    want = "/" + namespace.strip("/")
    for status in msg.status:
        if not status.name.endswith(EXECUTOR_SUFFIX):
            continue
        node = status.name[: -len(EXECUTOR_SUFFIX)]
        if (node.rsplit("/", 1)[0] or "/") != want:
            continue
        values = {kv.key: kv.value for kv in status.values}
        if READY_KEY in values:
            return values[READY_KEY] == "true", values.get(HOLD_KEY, "")
    return None

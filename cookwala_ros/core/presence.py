"""What a `cookwala_msgs/Presence` reading means (CORE §6.6): nobody, unless it says otherwise.

A reading counts as a responsible person at the device only when `person_present` is true and
the reading is fresh (received within the reader's `presence_stale_s`). Every other field can only
narrow that: a person who cannot be at the device within one minute (`reachable_within_s` above
60 s, negative or NaN) counts as nobody. `person_present: false` is nobody whatever the other
fields say, so a message with default fields (`reachable_within_s` = 0.0) never conjures up a
person, and no reading at all is nobody too. The executor's pre-start check and the safety
monitor both decide through this module, so they can never disagree about who is there.
"""

from __future__ import annotations

import math

REACHABLE_WITHIN_S = 60.0  # CORE §6.6: present, or reachable within one minute


def absent_reason(person_present: bool, reachable_within_s: float) -> str | None:
    """None when the reading's fields say a person can attend the device; else why not.

    Freshness is the caller's: it knows when the reading arrived (see `nobody_reason`)."""
    if not person_present:
        return "person_present is false"
    reach = float(reachable_within_s)
    if math.isnan(reach) or reach < 0.0:
        return f"reachable_within_s {reach} is not a duration"
    if reach > REACHABLE_WITHIN_S:
        return f"the person is {reach:g} s away (more than {REACHABLE_WITHIN_S:g} s)"
    return None


def counts_as_present(person_present: bool, reachable_within_s: float) -> bool:
    return absent_reason(person_present, reachable_within_s) is None


def nobody_reason(person_present: bool | None, reachable_within_s: float, age_s: float | None,
                  stale_s: float) -> str | None:
    """None when a reading `age_s` old (None: no reading yet) says a person is there now; else why not."""
    if age_s is None or person_present is None:
        return "no presence reading"
    if age_s > stale_s:
        return f"presence reading {age_s:.1f} s old (more than {stale_s:g} s)"
    return absent_reason(person_present, reachable_within_s)

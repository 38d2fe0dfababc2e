"""A failing callback of the monitor stops the kitchen, latched (issue 16, item 5).

It used to halt once and stay armed: its gate kept forwarding the executor's heat, and with a
callback failing on every heater state the hob chattered between heat and 0 W. The monitor runs
in this process (the armed kitchen of test_safety_node_starved.py), so a callback can be handed
a message it cannot read.
"""

from __future__ import annotations

from test_safety_node_starved import starved  # noqa: F401 - the fixture: an armed monitor, heating


def test_a_failing_callback_is_a_latched_stop_with_the_gate_closed(starved):  # noqa: F811
    monitor, _, spin_for = starved
    monitor._on_estop(None)  # not a std_msgs/Bool: the callback raises inside the monitor
    spin_for(0.3)
    episode = monitor.monitor.arbiter.episode
    assert monitor.monitor.state == "stopped", monitor.monitor.state
    assert episode.trigger == "monitor_error" and "_on_estop" in episode.detail, episode.detail
    assert not monitor._gate_open()  # the executor's heat is no longer forwarded
    monitor._on_estop(None)  # failing again: still one episode, still stopped
    spin_for(0.1)
    assert monitor.monitor.arbiter.episode is episode and monitor.monitor.state == "stopped"

"""Contract-net teaming: protocol state machines, bid scoring, allocation. Pure Python."""

"""SafetyLimits packs (stricter wins), monitor rules and stop arbitration. Pure Python."""

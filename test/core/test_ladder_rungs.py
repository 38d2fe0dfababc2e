"""Sensor ladders, onSensorMissing and sensor trust."""

from __future__ import annotations

import itertools

import pytest

from cookwala_ros.core import ladder, sensor_trust, vocab

POLICIES = (None, "estimate", "time", "human", "refuse")
ALL_SENSOR_SETS = (frozenset(), frozenset(vocab.sensor_ids()))


def _every_choice(op_id):
    for sensors, model, human, policy in itertools.product(ALL_SENSOR_SETS, (False, True), (False, True), POLICIES):
        yield (sensors, model, human, policy), ladder.choose_rung(op_id, sensors, model, human, policy)


ATTENDED_OPS = sorted(o for o in vocab.operations() if (vocab.envelope(o) or {}).get("unattended") is False)


def test_the_standard_lists_attended_ops():
    assert {"cw.op.saute", "cw.op.sear", "cw.op.fry", "cw.op.deep_fry", "cw.op.reduce", "cw.op.caramelize"} <= set(ATTENDED_OPS)


@pytest.mark.parametrize("op_id", ATTENDED_OPS)
def test_attended_ops_never_fall_back_to_time(op_id):
    for case, choice in _every_choice(op_id):
        assert choice != "time", case


def test_deep_fry_has_no_fallback():
    for case, choice in _every_choice("cw.op.deep_fry"):
        assert choice in (None, "cw.sense.oil_temp"), case
        if not case[0]:
            assert choice is None, case


@pytest.mark.parametrize("op_id", sorted(vocab.operations()))
def test_policy_only_narrows(op_id):
    for (sensors, model, human, policy), choice in _every_choice(op_id):
        if policy is None or choice is None:
            continue
        assert choice in ladder.ladder_for(op_id)
        if not ladder.is_sensor_rung(choice):
            assert choice == ladder.FALLBACK_FOR_POLICY[policy]
            # the unrestricted ladder could also have used a fallback (never a sensor) here
            assert not ladder.is_sensor_rung(ladder.choose_rung(op_id, sensors, model, human))


def test_first_satisfiable_rung_wins():
    assert ladder.choose_rung("cw.op.simmer", ["cw.sense.bubble_vision", "cw.sense.liquid_temp"]) == "cw.sense.liquid_temp"
    assert ladder.choose_rung("cw.op.simmer", [], allow_model=True) == "model"
    assert ladder.choose_rung("cw.op.simmer", [], allow_model=False) == "time"
    assert ladder.choose_rung("cw.op.saute", [], allow_model=False, human_present=True) == "human"
    assert ladder.choose_rung("cw.op.mix", []) == "time"


def test_aliases_satisfy_rungs():
    assert ladder.choose_rung("cw.op.bake", ["cw.sense.oven_air_temp"]) == "cw.sense.oven_temp"
    assert ladder.device_sensor_for("cw.sense.oven_temp", ["cw.sense.oven_air_temp"]) == "cw.sense.oven_air_temp"


def test_sensor_policy_from_node():
    assert ladder.sensor_policy({"until": {"onSensorMissing": "time"}}) == "time"
    assert ladder.sensor_policy({"ccp": "ccp1"}) == "refuse"
    assert ladder.sensor_policy({"ccp": "ccp1", "until": {"onSensorMissing": "human"}}) == "human"
    assert ladder.sensor_policy({"until": {"minTime": "PT1M"}}) is None


NOW = "2026-10-05T00:00:00Z"


def test_trusted_sensors_health_and_calibration():
    caps = {"capabilities": {"sensors": [
        {"sensor": "cw.sense.oil_temp", "state": "ok", "calibration": {"validUntil": "2027-01-01T00:00:00Z"}},
        {"sensor": "cw.sense.liquid_temp", "state": "degraded"},
        {"sensor": "cw.sense.core_temp", "calibration": {"validUntil": "2026-01-01T00:00:00Z"}},
        {"sensor": "cw.sense.pan_surface_temp", "calibration": {"validUntil": "soon"}},
        {"sensor": "cw.sense.oven_temp"},
        {"sensor": "cw.sense.vision", "visionCues": ["cw.sense.translucent"]},
    ]}}
    trusted = sensor_trust.trusted_sensors(caps, NOW)
    assert trusted == {"cw.sense.oil_temp", "cw.sense.oven_air_temp", "cw.sense.vision", "cw.sense.translucent"}
    assert "cw.sense.oil_temp" not in sensor_trust.trusted_sensors(caps, NOW, demoted=["cw.sense.oil_temp"])
    assert sensor_trust.distrust_reason({"sensor": "x", "state": "fault"}) == "state fault"


def test_plausibility_demotes_both_sensors():
    result = sensor_trust.check_plausibility(
        [{"sensor": "a", "tempC": 175.0}, {"sensor": "b", "tempC": 187.0}],
        [{"sensor": "a", "accuracy": 1.0}, {"sensor": "b", "accuracy": 1.0}])
    assert (result.ok, result.reason, result.demoted) == (False, "implausible", frozenset({"a", "b"}))
    assert "differ by more than 3" in result.detail
    ok = sensor_trust.check_plausibility([{"sensor": "a", "tempC": 175.0}, {"sensor": "b", "tempC": 178.0}],
                                         [{"sensor": "a", "accuracy": 1.0}, {"sensor": "b", "accuracy": 1.0}])
    assert ok.ok and ok.reason == "ok"


def test_now_must_be_a_date_time():
    with pytest.raises(ValueError, match="now"):
        sensor_trust.distrust_reason({"sensor": "x", "calibration": {"validUntil": NOW}}, now="yesterday")


@pytest.mark.parametrize("text, iso", [
    ("2026-10-05T00:00:00Z", "2026-10-05T00:00:00+00:00"),
    ("2026-10-05T02:00:00.5+03:00", "2026-10-04T23:00:00.500000+00:00"),
    ("2026-10-05t00:00:00.123456789z", "2026-10-05T00:00:00.123456+00:00"),
])
def test_parse_time_reads_rfc3339(text, iso):
    import datetime as dt

    assert sensor_trust.parse_time(text).astimezone(dt.timezone.utc).isoformat() == iso


@pytest.mark.parametrize("text", ["2026-10-05", "2026-10-05T00:00:00", "2026-13-05T00:00:00Z", "until further notice", 20261005])
def test_parse_time_refuses_what_it_cannot_compare(text):
    assert sensor_trust.parse_time(text) is None

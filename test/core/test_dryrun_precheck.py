"""The pre-start check's plan, its input errors, and the `cookwala-ros dryrun` command."""

from __future__ import annotations

import json

import pytest

from cookwala_ros.cli import main as cli_main
from cookwala_ros.core import dryrun

CAPS = {"capabilities": {
    "ops": [{"op": o} for o in ("cw.op.cut", "cw.op.heat", "cw.op.simmer", "cw.op.bake", "cw.op.mix", "cw.op.legacy_step")],
    "sensors": [{"sensor": "cw.sense.vision"}, {"sensor": "cw.sense.liquid_temp"}, {"sensor": "cw.sense.oven_air_temp"}]}}


def _recipe(*nodes, **process):
    return {"id": "r1", "process": {"nodes": list(nodes), **process}}


def test_plan_says_who_and_how():
    recipe = _recipe({"id": "a", "op": "cw.op.cut"},
                     {"id": "b", "op": "cw.op.simmer", "params": {"tempC": 90}},
                     {"id": "c", "op": "cw.op.bake", "params": {"tempC": 180}},
                     {"id": "d", "op": "cw.op.heat"},
                     {"id": "e", "op": "cw.op.grill"},
                     {"id": "f", "op": "cw.op.mix"},
                     {"id": "g", "op": "cw.op.legacy_step"})
    result = dryrun.precheck(recipe, CAPS, human_present=True, allow_model=True)
    assert result.accepted
    got = [(p.node, p.by, p.verified_by, p.rung, p.sensor) for p in result.plan]
    assert got == [
        ("a", "device", "sensor", "cw.sense.vision", "cw.sense.vision"),
        ("b", "device", "sensor", "cw.sense.liquid_temp", "cw.sense.liquid_temp"),
        ("c", "device", "sensor", "cw.sense.oven_temp", "cw.sense.oven_air_temp"),
        ("d", "device", "model", "model", None),
        ("e", "human", "human", "human", None),
        ("f", "device", "time", "time", None),
        ("g", "human", "human", "human", None),  # never the device, even though it declares it
    ]
    wire = result.to_wire()
    assert wire["state"] == "accepted" and wire["plan"][2]["verifiedBy"] == "sensor" and "refusal" not in wire


def test_refusal_reports_the_partial_plan_and_node():
    result = dryrun.precheck(_recipe({"id": "a", "op": "cw.op.mix"}, {"id": "b", "op": "cw.op.simmer", "params": {"tempC": 99}}),
                             CAPS, human_present=True)
    wire = result.to_wire()
    assert wire["refusal"]["reason"] == "envelope_out_of_range" and wire["refusal"]["node"] == "b"
    assert [p["node"] for p in wire["plan"]] == ["a"]
    assert "85–96 °C" in wire["refusal"]["detail"]


def test_graph_order_follows_edges_and_inputs():
    nodes = [{"id": "x", "op": "cw.op.mix", "inputs": ["y_out"]}, {"id": "y", "op": "cw.op.mix", "output": "y_out"},
             {"id": "z", "op": "cw.op.mix"}]
    assert [n["id"] for n in dryrun.graph_order(_recipe(*nodes))] == ["y", "x", "z"]
    edges = [{"from": "z", "to": "x"}, {"from": "z", "to": "y"}]
    assert [n["id"] for n in dryrun.graph_order(_recipe(*nodes, edges=edges))] == ["z", "y", "x"]
    cycle = [{"from": "x", "to": "y"}, {"from": "y", "to": "x"}]
    assert [n["id"] for n in dryrun.graph_order(_recipe(*nodes[1:], {"id": "x", "op": "cw.op.mix"}, edges=cycle))] == ["y", "z", "x"]


def test_demoted_sensors_do_not_count():
    recipe = _recipe({"id": "b", "op": "cw.op.simmer", "params": {"tempC": 90}})
    result = dryrun.precheck(recipe, CAPS, allow_model=False, demoted_sensors=["cw.sense.liquid_temp"])
    assert result.plan[0].verified_by == "time"


@pytest.mark.parametrize("recipe, pointer", [
    ("not a recipe", "/: a recipe"),
    ({"process": {"nodes": []}}, "/process/nodes"),
    ({"process": {"nodes": [{"id": "a"}]}}, "/process/nodes/0/op"),
    ({"process": {"nodes": [{"id": "a", "op": "cw.op.mix"}, {"id": "a", "op": "cw.op.mix"}]}}, "/process/nodes/1/id"),
    ({"process": {"nodes": [{"id": "a", "op": "cw.op.mix", "params": []}]}}, "/process/nodes/0/params"),
])
def test_malformed_recipes_name_the_field(recipe, pointer):
    with pytest.raises(ValueError, match=pointer):
        dryrun.precheck(recipe, CAPS)


def test_malformed_limits_and_request():
    recipe = _recipe({"id": "a", "op": "cw.op.mix"})
    with pytest.raises(ValueError, match="limits"):
        dryrun.precheck(recipe, CAPS, limits="strict")
    with pytest.raises(ValueError, match="/request/colour"):
        dryrun.precheck_from_wire({"recipe": recipe, "capabilities": CAPS, "request": {"colour": "red"}})
    with pytest.raises(ValueError, match="altitudeM"):
        dryrun.precheck(recipe, CAPS, altitude_m="high")


@pytest.fixture
def files(tmp_path):
    def write(name, doc):
        path = tmp_path / name
        path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
        return str(path)
    return write


def test_cli_accepted(files, capsys):
    recipe = files("r.json", _recipe({"id": "a", "op": "cw.op.cut"}, {"id": "b", "op": "cw.op.grill"}))
    caps = files("c.json", CAPS)
    assert cli_main(["dryrun", recipe, "--device", caps, "--human-present"]) == 0
    out = capsys.readouterr().out
    assert "cw.op.cut" in out and "sensor cw.sense.vision" in out and "human" in out and "accepted: 2 node(s)" in out


def test_cli_refused_and_json(files, capsys):
    recipe = files("r.json", _recipe({"id": "a", "op": "cw.op.cut"}))
    caps = files("c.json", CAPS)
    assert cli_main(["dryrun", recipe, "--device", caps]) == 1
    assert "refused: needs_human_present at node a:" in capsys.readouterr().out
    assert cli_main(["dryrun", recipe, "--device", caps, "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["refusal"]["reason"] == "needs_human_present"


def test_cli_limits_and_altitude(files, capsys):
    recipe = files("r.json", _recipe({"id": "a", "op": "cw.op.simmer", "params": {"tempC": 90}}))
    caps = files("c.json", CAPS)
    assert cli_main(["dryrun", recipe, "--device", caps, "--altitude", "0"]) == 0
    assert cli_main(["dryrun", recipe, "--device", caps, "--altitude", "3000"]) == 1
    assert "envelope_out_of_range" in capsys.readouterr().out
    pack = files("p.json", {"limits": [{"id": "w", "kind": "max_temp", "unit": "degC", "max": 80, "action": "cut_heat",
                                        "source": "t", "appliesTo": {"medium": "water"}}]})
    assert cli_main(["dryrun", recipe, "--device", caps, "--limits", pack]) == 1
    assert "safety_limit" in capsys.readouterr().out


def test_cli_bad_input_exits_2(files, capsys):
    caps = files("c.json", CAPS)
    assert cli_main(["dryrun", files("bad.json", "{not json"), "--device", caps]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert cli_main(["dryrun", files("r.json", {"process": {}}), "--device", caps]) == 2
    assert "/process/nodes" in capsys.readouterr().err
    assert cli_main(["dryrun", "/nonexistent/recipe.json", "--device", caps]) == 2


def test_recipe_supervision_asks_for_a_person():
    mix = {"id": "a", "op": "cw.op.mix"}
    required = dict(_recipe(mix), safety={"supervision": {"default": "hands_on_required"}})
    result = dryrun.precheck(required, CAPS, human_present=False)
    assert (result.reason, result.node) == ("needs_human_present", "a")
    assert "hands_on_required" in result.detail
    assert dryrun.precheck(required, CAPS, human_present=True).accepted
    relaxed = dict(_recipe(mix), safety={"supervision": {"default": "unattended_ok"}, "abort": {"neverLeave": ["b"]}})
    assert dryrun.precheck(relaxed, CAPS, human_present=False).accepted


def test_request_context_is_not_changed():
    from cookwala_ros.core.request_checks import RequestContext

    ctx = RequestContext()
    dryrun.precheck(_recipe({"id": "a", "op": "cw.op.mix"}), CAPS, request=ctx, now="2026-10-05T00:00:00Z")
    assert ctx.now is None


def test_wire_request_fields_reach_the_checks():
    recipe = _recipe({"id": "a", "op": "cw.op.mix"})
    base = {"recipe": recipe, "capabilities": CAPS, "humanPresent": True}
    assert dryrun.vector_dryrun({**base, "request": {"core": "0.2.3"}}) == {"state": "accepted", "reason": None, "by": ["device"]}
    assert dryrun.vector_dryrun({**base, "request": {"busy": True}})["reason"] == "busy"
    assert dryrun.vector_dryrun({**base, "request": {"allergenBlocks": ["eggs"], "inventoryAllergens": ["Egg"]}})["reason"] == "allergen_block"


HOSTILE_RECIPES = {
    "nested 1,000 deep": "[" * 1000 + "]" * 1000,
    "a 100,000-digit number": '{"servings": ' + "9" * 100_000 + "}",
    "ingredients a string": {"ingredients": "salt"},
    "safety an array": {"safety": [1]},
    "allergens a string": {"safety": {"allergens": "peanut"}},
    "an ingredient a number": {"ingredients": [7]},
}
# members of a node (found by benchmarks/fuzz_bench.py): the dependency walk read them before the schema did
HOSTILE_NODES = {"inputs a string": {"inputs": "x"}, "inputs of objects": {"inputs": [{"a": 1}, ["b"]]},
                 "an object for inputs": {"inputs": {"a": 1}}}


@pytest.mark.parametrize("doc", HOSTILE_RECIPES.values(), ids=HOSTILE_RECIPES.keys())
def test_cli_hostile_recipes_exit_with_a_message_not_a_traceback(files, capsys, doc):
    recipe = _recipe({"id": "a", "op": "cw.op.cut"})
    text = doc if isinstance(doc, str) else json.dumps({**recipe, **doc})
    code = cli_main(["dryrun", files("r.json", text), "--device", files("c.json", CAPS), "--human-present"])
    err = capsys.readouterr().err
    assert code in (0, 1, 2) and "Traceback" not in err
    if isinstance(doc, str):
        assert code == 2 and "not JSON this reader accepts" in err, err


def test_cli_hostile_capabilities_name_the_field(files, capsys):
    recipe = files("r.json", _recipe({"id": "a", "op": "cw.op.cut"}))
    caps = files("c.json", {**CAPS, "capabilities": {**CAPS["capabilities"], "ops": 7}})
    assert cli_main(["dryrun", recipe, "--device", caps]) == 2
    assert "capabilities/capabilities/ops" in capsys.readouterr().err


@pytest.mark.parametrize("member", HOSTILE_NODES.values(), ids=HOSTILE_NODES.keys())
def test_cli_hostile_node_members_exit_with_a_message_not_a_traceback(files, capsys, member):
    recipe = _recipe({"id": "a", "op": "cw.op.cut", **member}, {"id": "b", "op": "cw.op.cut"})
    code = cli_main(["dryrun", files("r.json", json.dumps(recipe)), "--device", files("c.json", CAPS), "--human-present"])
    assert code in (0, 1, 2) and "Traceback" not in capsys.readouterr().err  # the pre-check reads what it can

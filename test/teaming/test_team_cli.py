"""`cookwala-ros team plan`: recipe nodes to robots in precedence order, reasons, exit codes."""

from __future__ import annotations

import json

import pytest

from cookwala_ros import cli
from cookwala_ros.core import dryrun
from cookwala_ros.teaming.allocator import allocate
from cookwala_ros.teaming.recipe_tasks import DEFAULT_TASK_S, recipe_tasks

from teaming_fixtures import bid, capabilities, standard_validator

# cut -> saute -> simmer, chained by inputs/outputs (no explicit edges)
RECIPE = {
    "cookwala": "0.2.0", "id": "soup",
    "equipment": [{"ref": "pot", "class": "cw.eq.vessel.pot.sauce"}, {"ref": "hob", "class": "cw.eq.heat.hob"}],
    "process": {"nodes": [
        {"id": "n1", "op": "cw.op.cut", "inputs": ["onion"], "output": "diced", "until": {"minTime": "PT2M"}},
        {"id": "n2", "op": "cw.op.saute", "inputs": ["diced"], "output": "base", "equipment": ["pot", "hob"],
         "until": {"minTime": "PT5M", "maxTime": "PT8M", "nominalTime": "PT6M"}},
        {"id": "n3", "op": "cw.op.simmer", "inputs": ["base", "water"], "output": "soup", "equipment": ["pot", "hob"],
         "until": {"maxTime": "PT20M"}},
    ]},
}
CUTTER = capabilities("robot:cutter", ["cw.op.cut"])
SAUTER = capabilities("robot:sauter", ["cw.op.saute"], heat=["cw.eq.heat.hob"])
SIMMERER = capabilities("robot:simmerer", ["cw.op.simmer"], sensors=["cw.sense.liquid_temp"], heat=["cw.eq.heat.hob"])


def write(tmp_path, name: str, document) -> str:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return str(path)


def plan(capsys, tmp_path, recipe=RECIPE, robots=(CUTTER, SAUTER, SIMMERER), *extra):
    argv = ["team", "plan", write(tmp_path, "recipe.json", recipe)]
    for i, robot in enumerate(robots):
        argv += ["--robot", write(tmp_path, f"robot{i}.json", robot)]
    code = cli.main(argv + list(extra))
    out, err = capsys.readouterr()
    return code, out, err


def rows(out: str) -> dict[str, list[str]]:
    lines = out.splitlines()
    assert lines[0].split() == ["task", "op", "robot", "start", "end"]
    table = {}
    for line in lines[1:]:
        if line.startswith(("makespan:", "hand-off", "note:", "unassignable:")):
            break
        cells = line.split()
        table[cells[0]] = cells[1:]
    return table


def test_each_node_goes_to_the_robot_that_can_do_it_in_precedence_order(capsys, tmp_path):
    code, out, err = plan(capsys, tmp_path, RECIPE, (CUTTER, SAUTER, SIMMERER), "--human-present", "--handoff-s", "15")
    assert (code, err) == (0, "")
    assert rows(out) == {"n1": ["cw.op.cut", "robot:cutter", "0", "120"],
                         "n2": ["cw.op.saute", "robot:sauter", "135", "495"],  # nominalTime, after a hand-off
                         "n3": ["cw.op.simmer", "robot:simmerer", "510", "1710"]}  # maxTime only
    assert "makespan: 1710 s (PT28M30S; cookwala_ros-greedy, proven shortest)" in out  # CP-SAT found none shorter
    assert "hand-off: n1 robot:cutter -> robot:sauter at 120 s" in out
    assert "hand-off: n2 robot:sauter -> robot:simmerer at 495 s" in out
    assert "unassignable" not in out


def test_the_robot_order_on_the_command_line_does_not_change_the_plan(capsys, tmp_path):
    first = plan(capsys, tmp_path, RECIPE, (CUTTER, SAUTER, SIMMERER), "--human-present")
    second = plan(capsys, tmp_path, RECIPE, (SIMMERER, CUTTER, SAUTER), "--human-present")
    assert first == second and first[0] == 0


def test_a_task_nobody_can_do_exits_1_with_each_robots_reason(capsys, tmp_path):
    code, out, err = plan(capsys, tmp_path, RECIPE, (CUTTER, SIMMERER), "--human-present")
    assert code == 1 and err == ""
    assert rows(out) == {"n1": ["cw.op.cut", "robot:cutter", "0", "120"]}
    assert "unassignable: n2: robot:cutter: missing_op; robot:simmerer: missing_op" in out
    # what follows an unassignable task cannot be planned either, and says why
    assert "unassignable: n3: predecessor n2 is unassignable; robot:cutter: missing_op" in out


def test_without_a_person_cutting_and_sauteing_are_declined_for_presence(capsys, tmp_path):
    code, out, _ = plan(capsys, tmp_path)
    assert code == 1
    assert rows(out) == {}
    assert "unassignable: n1: robot:cutter: needs_human_present; robot:sauter: missing_op; robot:simmerer: missing_op" in out
    assert ("unassignable: n2: predecessor n1 is unassignable; robot:cutter: missing_op; "
            "robot:sauter: needs_human_present; robot:simmerer: missing_op") in out


def test_a_node_the_recipe_keeps_for_people_is_not_given_to_a_robot(capsys, tmp_path):
    recipe = json.loads(json.dumps(RECIPE))
    recipe["process"]["nodes"][0]["assignment"] = {"allowed": ["human"]}
    code, out, _ = plan(capsys, tmp_path, recipe, (CUTTER, SAUTER, SIMMERER), "--human-present")
    assert code == 1
    assert "unassignable: n1: robot:cutter: other (the recipe does not let a robot do node n1" in out


def test_json_prints_the_standards_team_plan(capsys, tmp_path, spec_dir):
    code, out, _ = plan(capsys, tmp_path, RECIPE, (CUTTER, SAUTER, SIMMERER), "--human-present", "--json")
    assert code == 0
    document = json.loads(out)
    assert [(a["actorId"], [t["ref"] for t in a["tasks"]]) for a in document["assignments"]] == [
        ("robot:cutter", ["soup#n1"]), ("robot:sauter", ["soup#n2"]), ("robot:simmerer", ["soup#n3"])]
    assert document["criticalPath"] == ["soup#n1", "soup#n2", "soup#n3"]
    team_plan = standard_validator(spec_dir, "advice.schema.json#/$defs/TeamPlan")
    assert list(team_plan.iter_errors(document)) == []
    code, out, _ = plan(capsys, tmp_path, RECIPE, (CUTTER,), "--json")
    assert code == 1
    document = json.loads(out)
    assert document["solver"]["status"] == "infeasible" and document["x-cookwala-ros-unassignable"]
    assert list(team_plan.iter_errors(document)) == []


def no_traceback(err: str) -> None:
    assert "Traceback" not in err and err.startswith("cookwala-ros team plan: ")


@pytest.mark.parametrize("recipe, needle", [
    ("{not json", "not valid JSON"),
    ([], "/: a recipe must be an object"),
    ({"process": {"nodes": []}}, "/process/nodes"),
    ({"process": {"nodes": [{"id": "n1"}]}}, "/process/nodes/0/op"),
    ({"process": {"nodes": [{"id": "n1", "op": "cw.op.cut", "until": {"minTime": "two minutes"}}]}},
     "/process/nodes/0/until/minTime"),
    ({"process": {"nodes": [{"id": "n1", "op": "cw.op.cut", "inputs": "onion"}]}}, "/process/nodes/0/inputs"),
    ({"process": {"nodes": [{"id": "n1", "op": "cw.op.cut"}], "edges": [{"from": "n1"}]}}, "/process/edges/0"),
    ({"process": {"nodes": [{"id": "a", "op": "cw.op.cut"}, {"id": "b", "op": "cw.op.cut"}],
                  "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "a"}]}}, "cycle"),
])
def test_a_malformed_recipe_exits_2_naming_file_and_field(capsys, tmp_path, recipe, needle):
    code, out, err = plan(capsys, tmp_path, recipe)
    assert code == 2 and out == ""
    no_traceback(err)
    assert "recipe.json" in err and needle in err


@pytest.mark.parametrize("robot, needle", [
    ("[1, 2", "not valid JSON"),
    ("nope", "not valid JSON"),
    ([], "/: must be a capabilities document"),
    ({"capabilities": {"ops": []}}, "/actor/id"),
    ({"actor": {"id": "robot:x"}}, "/capabilities"),
    ({"actor": {"id": "robot:x"}, "capabilities": {"ops": "cut"}}, "/capabilities/ops"),
    ({"actor": {"id": "robot:x"}, "capabilities": {"ops": [{"op": 3}]}}, "/capabilities/ops/0/op"),
    ({"actor": {"id": "robot:x"}, "capabilities": {"ops": [], "sensors": [7]}}, "/capabilities/sensors/0"),
    (SAUTER, "'robot:sauter' is also the actor of"),
])
def test_malformed_capabilities_exit_2_naming_file_and_field(capsys, tmp_path, robot, needle):
    code, out, err = plan(capsys, tmp_path, RECIPE, (SAUTER, robot))
    assert code == 2 and out == ""
    no_traceback(err)
    assert "robot1.json" in err and needle in err


def test_missing_files_and_bad_options_exit_2(capsys, tmp_path):
    code = cli.main(["team", "plan", str(tmp_path / "absent.json"), "--robot", write(tmp_path, "r.json", CUTTER)])
    err = capsys.readouterr().err
    assert code == 2 and "absent.json: cannot read" in err
    code, _, err = plan(capsys, tmp_path, RECIPE, (CUTTER,), "--handoff-s", "-1")
    assert code == 2 and "--handoff-s" in err
    with pytest.raises(SystemExit) as stop:  # no --robot: argparse's usage error
        cli.main(["team", "plan", write(tmp_path, "recipe.json", RECIPE)])
    assert stop.value.code == 2


def test_recipe_tasks_use_the_dry_runs_graph_and_document_their_durations():
    recipe = {"id": "r", "process": {
        "nodes": [{"id": "a", "op": "cw.op.cut"}, {"id": "b", "op": "cw.op.mix", "until": {"minTime": "PT30S"}},
                  {"id": "c", "op": "cw.op.serve", "inputs": ["x"]}, {"id": "d", "op": "cw.op.mix", "output": "x"}],
        "edges": [{"from": "a", "to": "b"}]}}
    got = recipe_tasks(recipe)
    assert {t.id: t.predecessors for t in got.tasks} == {"r#a": (), "r#b": ("r#a",), "r#c": ("r#d",), "r#d": ()}
    assert dryrun.node_predecessors(recipe) == {"a": (), "b": ("a",), "c": ("d",), "d": ()}
    assert [n["id"] for n in dryrun.graph_order(recipe)] == ["a", "b", "d", "c"]
    assert {t.id: t.duration_s for t in got.tasks} == {"r#a": DEFAULT_TASK_S, "r#b": 30, "r#c": DEFAULT_TASK_S,
                                                      "r#d": DEFAULT_TASK_S}
    assert len(got.assumptions) == 3 and "planned as PT1M" in got.assumptions[0]


def test_the_solver_is_chosen_by_name_and_a_misspelt_one_is_refused(capsys, tmp_path):
    code, out, _ = plan(capsys, tmp_path, RECIPE, (CUTTER, SAUTER, SIMMERER), "--human-present", "--handoff-s", "15",
                        "--solver", "greedy")
    assert code == 0 and "makespan: 1710 s (PT28M30S; cookwala_ros-greedy)" in out
    with pytest.raises(SystemExit) as exited:
        plan(capsys, tmp_path, RECIPE, (CUTTER, SAUTER, SIMMERER), "--solver", "cpsat")
    assert exited.value.code == 2 and "invalid choice: 'cpsat'" in capsys.readouterr().err


def test_a_recipes_vessels_hobs_and_boards_are_shared_resources_its_tools_are_not():
    recipe = {"id": "r",
              "equipment": [{"ref": "pot", "class": "cw.eq.vessel.pot.sauce"}, {"ref": "hob", "class": "cw.eq.heat.hob"},
                            {"ref": "board", "class": "cw.eq.tool.cutting_board"},
                            {"ref": "spoon", "class": "cw.eq.tool.spoon.wooden"},
                            {"ref": "blender", "class": "cw.eq.tool.blender.immersion", "optional": True},
                            {"ref": "tray", "class": "cw.eq.vessel.tray.baking", "optional": True}],
              "process": {"nodes": [
                  {"id": "stock", "op": "cw.op.simmer", "equipment": ["pot", "hob", "spoon"], "until": {"minTime": "PT10M"}},
                  {"id": "sauce", "op": "cw.op.simmer", "equipment": ["pot", "hob"], "until": {"minTime": "PT5M"}},
                  {"id": "chop", "op": "cw.op.cut", "equipment": ["board", "blender", "tray"], "until": {"minTime": "PT2M"}}],
                  "edges": []}}
    got = {t.id: t for t in recipe_tasks(recipe).tasks}
    assert got["r#stock"].resources == ("r#pot", "r#hob")
    assert got["r#sauce"].resources == ("r#pot", "r#hob")
    assert got["r#chop"].resources == ("r#board",)  # optional equipment is neither needed nor held
    assert got["r#stock"].needs.equipment == ("cw.eq.vessel.pot.sauce", "cw.eq.heat.hob", "cw.eq.tool.spoon.wooden")
    # two robots, both able to simmer: one pot and one hob still make the simmers one after the other
    bids = [bid(robot, task.id, task.duration_s) for robot in ("robot:a", "robot:b") for task in got.values()]
    schedule = allocate(list(got.values()), bids)
    stock, sauce = schedule.tasks["r#stock"], schedule.tasks["r#sauce"]
    assert stock.end_s <= sauce.start_s or sauce.end_s <= stock.start_s
    assert schedule.makespan_s >= 900

"""The device file is checked key by key, and the capabilities document is generated from it."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from cookwala_ros.capabilities import ServedInterfaces, capabilities_document
from cookwala_ros.device import DeviceConfigError, load_device_config, parse_device_config


@pytest.fixture()
def raw_device(repo_root):
    return yaml.safe_load((repo_root / "config" / "device.yaml").read_text())


def test_packaged_device_file_loads():
    config = load_device_config()
    assert config.device_id.startswith("cwros:")
    assert "cw.op.simmer" in config.ops


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["device"].pop("id"), "device.id: missing"),
        (lambda d: d["heaters"][0].update(power_w="2kW"), "heaters[0].power_w: expected a number"),
        (lambda d: d["heaters"][0].update(power_w=True), "heaters[0].power_w: expected a number"),
        (lambda d: d["heaters"][0].update(power_w=0), "heaters[0].power_w: must be > 0"),
        (lambda d: d["heaters"][0].update(powr_w=10), "heaters[0].powr_w: unknown key"),
        (lambda d: d["heaters"][0].update(modes=[False]), "heaters[0].modes[0]: expected a string"),
        (lambda d: d["heaters"][0].update(modes=["off", "powr"]),
         "heaters[0].modes[1]: 'powr' is not a heater mode (one of off, power, setpoint); did you mean 'power'?"),
        (lambda d: d["heaters"][0].update(modes=["boost"]), "heaters[0].modes[0]: 'boost' is not a heater mode"),
        (lambda d: d["sensors"][1].update(sensor="oil_temp"), "sensors[1].sensor: expected an id starting with 'cw.sense.'"),
        (lambda d: d["ops"].append("simmer"), "ops[10]: expected an id starting with 'cw.op.'"),
        (lambda d: d["ops"].append("cw.op.simmer"), "ops: an operation is listed twice"),
        (lambda d: d["safety"].update(emergency_stop="maybe"), "safety.emergency_stop: expected one of"),
        (lambda d: d.update(colour="red"), "colour: unknown key"),
        (lambda d: d["arm"].pop("trajectory_topic"), "arm.trajectory_topic: missing"),
        # a misspelt id would change who does and verifies each step: named, with the nearest id
        (lambda d: d["sensors"][0].update(sensor="cw.sense.liquid_tmep"),
         "sensors[0].sensor: 'cw.sense.liquid_tmep' is not a sensor of the vocabulary (did you mean 'cw.sense.liquid_temp'?)"),
        (lambda d: d["ops"].__setitem__(2, "cw.op.simmr"), "ops[2]: 'cw.op.simmr' is not an op of the vocabulary (did you mean 'cw.op.simmer'?)"),
        (lambda d: d["sensors"][0].update(unit="furlongs"), "sensors[0].unit: 'furlongs' is not a unit of the standard"),
        # a unit of another quantity would be read as that quantity
        (lambda d: d["sensors"][0].update(unit="g"),
         "sensors[0].unit: 'g' is not a unit of temperature, which cw.sense.liquid_temp measures (one of degC)"),
        (lambda d: d["sensors"].append({"sensor": "cw.sense.mass", "unit": "ml"}),
         "sensors[3].unit: 'ml' is not a unit of mass, which cw.sense.mass measures (one of g, kg, mg, pinch)"),
        (lambda d: d["sensors"].append({"sensor": "cw.sense.vision", "unit": "pct"}),
         "sensors[3].unit: cw.sense.vision has no unit in the standard (leave unit out), got 'pct'"),
        # a class outside the vocabulary would put a hob or a pot the standard has no word for
        # into the capabilities: named, with the nearest class
        (lambda d: d["heaters"][0].update(**{"class": "cw.eq.hbo"}),
         "heaters[0].class: 'cw.eq.hbo' is not a heater class of the vocabulary (did you mean 'cw.eq.heat.hob'?)"),
        (lambda d: d["heaters"][0].update(**{"class": "cw.eq.heat.banana"}),
         "heaters[0].class: 'cw.eq.heat.banana' is not a heater class of the vocabulary (did you mean 'cw.eq.heat.hob'?)"),
        (lambda d: d["heaters"][0].update(**{"class": "cw.eq.vessel.pot.sauce"}),
         "heaters[0].class: 'cw.eq.vessel.pot.sauce' is not a heater class of the vocabulary"),
        (lambda d: d["equipment"][0].update(**{"class": "cw.eq.heat.banana"}),
         "equipment[0].class: 'cw.eq.heat.banana' is not an equipment class of the vocabulary (did you mean 'cw.eq.heat.hob'?)"),
        (lambda d: d["equipment"][0].update(**{"class": "cw.eq.vessel.pot.suace"}),
         "equipment[0].class: 'cw.eq.vessel.pot.suace' is not an equipment class of the vocabulary "
         "(did you mean 'cw.eq.vessel.pot.sauce'?)"),
        # a number that is not finite, or outside what it can mean
        (lambda d: d["sensors"][0].update(rate_hz=float("nan")), "sensors[0].rate_hz: expected a finite number, got nan"),
        (lambda d: d["sensors"][0].update(rate_hz=0), "sensors[0].rate_hz: must be > 0, got 0"),
        (lambda d: d["sensors"][0].update(rate_hz=-10), "sensors[0].rate_hz: must be > 0, got -10"),
        (lambda d: d["sensors"][0].update(accuracy=-0.5), "sensors[0].accuracy: must be >= 0, got -0.5"),
        (lambda d: d["heaters"][0].update(power_w=float("inf")), "heaters[0].power_w: expected a finite number, got inf"),
        (lambda d: d["heaters"][0].update(power_w=float("nan")), "heaters[0].power_w: expected a finite number, got nan"),
        (lambda d: d["heaters"][0].update(max_temp_c=float("-inf")), "heaters[0].max_temp_c: expected a finite number"),
        (lambda d: d["heaters"][0].update(max_temp_c=0), "heaters[0].max_temp_c: must be > 0, got 0"),
        (lambda d: d["device"].update(altitude_m=float("nan")), "device.altitude_m: expected a finite number, got nan"),
        (lambda d: d["device"].update(altitude_m=float("inf")), "device.altitude_m: expected a finite number, got inf"),
        (lambda d: d["device"].update(altitude_m=12000), "device.altitude_m: must be -500..9000, got 12000"),
        (lambda d: d["arm"].update(reach_mm=float("nan")), "arm.reach_mm: expected a finite number"),
        (lambda d: d["arm"].update(payload_kg=-1), "arm.payload_kg: must be >= 0, got -1"),
        (lambda d: d["equipment"][0].update(capacity_ml=float("inf")), "equipment[0].capacity_ml: expected a finite number"),
        (lambda d: d["equipment"][0].update(diameter_mm=0), "equipment[0].diameter_mm: must be > 0, got 0"),
        (lambda d: d["executor"].update(recall_poll_s=float("nan")), "executor.recall_poll_s: expected a finite number"),
        (lambda d: d["safety_monitor"].update(heartbeat_lease_s=float("nan")),
         "safety_monitor.heartbeat_lease_s: expected a finite number, got nan"),
    ],
)
def test_bad_entries_are_named(raw_device, mutate, message):
    bad = copy.deepcopy(raw_device)
    mutate(bad)
    with pytest.raises(DeviceConfigError) as excinfo:
        parse_device_config(bad)
    assert message in str(excinfo.value)
    assert "\n" not in str(excinfo.value)  # one line: the node stops with it, not with a traceback


@pytest.mark.parametrize("where, cls", [("heaters", "cw.eq.heat.hob.induction"), ("equipment", "cw.eq.vessel.wok"),
                                        ("equipment", "cw.eq.vessel.pot.sauce.copper")])
def test_narrower_and_unlisted_equipment_classes_are_accepted(raw_device, where, cls):
    """A subclass of a known class, or a vessel the standard never names, is not a misspelling."""
    good = copy.deepcopy(raw_device)
    good[where][0]["class"] = cls
    parse_device_config(good)


def _shipped_device_files(root):
    """Every YAML file in the repo that is a device file (top-level `device:` and `ops:`)."""
    for folder in ("config", "examples", "test"):
        for path in sorted((root / folder).rglob("*.y*ml")):
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
            if isinstance(raw, dict) and "device" in raw and "ops" in raw:
                yield path


def test_every_shipped_device_file_loads(repo_root):
    files = list(_shipped_device_files(repo_root))
    assert repo_root / "config" / "device.yaml" in files
    for path in files:
        load_device_config(path)  # raises DeviceConfigError naming the file and the key


@pytest.mark.parametrize("raw", [["device"], "device", 3])
def test_a_document_that_is_not_a_mapping_is_named(raw):
    with pytest.raises(DeviceConfigError, match=r"^expected a mapping of sections \(device, ops, safety, ...\), got "):
        parse_device_config(raw)


@pytest.mark.parametrize("bind", ["", "127.0.0.1", "0.0.0.0", "::", "::1", "localhost", "kitchen-robot.local"])
def test_http_bind_takes_an_address_or_a_host_name(raw_device, bind):
    raw_device["executor"]["http_bind"] = bind
    assert parse_device_config(raw_device).executor["http_bind"] == bind


def test_vendor_extension_keys_are_accepted(raw_device):
    raw_device["device"]["x-acme-serial"] = "A123"
    assert parse_device_config(raw_device).device_id == raw_device["device"]["id"]


def test_missing_or_broken_file_is_reported(tmp_path):
    with pytest.raises(DeviceConfigError, match="cannot read device file"):
        load_device_config(tmp_path / "absent.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("device: [unclosed\n")
    with pytest.raises(DeviceConfigError, match="not valid YAML"):
        load_device_config(broken)


def _alias_bomb() -> str:
    """Six levels of ten aliases: a 10**6-element list when written out, a few lines as YAML."""
    lines = ['x-0: &x0 ["a", "a", "a", "a", "a", "a", "a", "a", "a", "a"]']
    lines += [f"x-{n}: &x{n} [{', '.join([f'*x{n - 1}'] * 10)}]" for n in range(1, 6)]
    return "\n".join(lines) + "\ndevice: {id: a, vendor: b, model: c}\nsafety: {}\nops: *x5\n"


@pytest.mark.parametrize(
    "content, message",
    [
        (b"device: {id: caf\xe9}\n", "not UTF-8 (byte 16)"),
        (b"[" * 10_000 + b"]" * 10_000, "nested more than 64 levels deep"),
        (b'{"a": ' * 10_000 + b"1" + b"}" * 10_000, "nested more than 64 levels deep"),
        ("".join(f"{'  ' * n}k{n}:\n" for n in range(600)).encode(), "nested more than 64 levels deep"),
        (b"device:\n  altitude_m: " + b"9" * 5_000 + b"\n", "not valid YAML at line 2 column 15: a number of 5000 characters"),
        (b"device: {id: a\x00b}\n", "not valid YAML: unacceptable character #x0000"),
        (b"device: [\n", "not valid YAML at line 2 column 1:"),
        (_alias_bomb().encode(), "ops[0]: expected an id starting with 'cw.op.', got [["),
        (b"# " + b"x" * (1 << 20) + b"\n", "larger than 1048576 bytes"),
    ],
    ids=["invalid-utf8", "10k-nested-lists", "10k-nested-json", "deep-block-yaml", "5000-digit-int", "nul-byte",
         "unclosed", "alias-bomb", "oversized"],
)
def test_hostile_files_are_one_line_naming_the_file(tmp_path, content, message):
    path = tmp_path / "device.yaml"
    path.write_bytes(content)
    with pytest.raises(DeviceConfigError) as excinfo:
        load_device_config(path)
    text = str(excinfo.value)
    assert text.startswith(f"{path}: ") and message in text
    assert "\n" not in text and len(text) < 400


def test_capabilities_document_reflects_the_device_file(raw_device):
    doc = capabilities_document(parse_device_config(raw_device))
    assert doc["actor"]["id"] == raw_device["device"]["id"]
    assert [o["op"] for o in doc["capabilities"]["ops"]] == raw_device["ops"]
    assert doc["capabilities"]["heat"][0]["powerW"] == raw_device["heaters"][0]["power_w"]
    assert doc["capabilities"]["heat"][0]["remoteStartAllowed"] is False
    assert {s["sensor"] for s in doc["capabilities"]["sensors"]} == {s["sensor"] for s in raw_device["sensors"]}
    assert doc["safety"]["emergencyStop"] == "both"
    json.dumps(doc)  # plain JSON data


def test_capabilities_document_is_valid_against_the_standard(spec_dir):
    jsonschema = pytest.importorskip("jsonschema")
    from referencing import Registry, Resource

    schemas = {p.name: json.loads(p.read_text()) for p in (spec_dir / "schemas").glob("*.schema.json")}
    registry = Registry().with_resources(
        (uri, Resource.from_contents(schema))
        for name, schema in schemas.items()
        for uri in (schema.get("$id", name), name)
    )
    validator = jsonschema.Draft202012Validator(schemas["capabilities.schema.json"], registry=registry)
    served = ServedInterfaces(namespace="/robot_a", action_server="/robot_a/executor/execute_recipe",
                              execute_node_action="/robot_a/executor/execute_node", http_url="http://127.0.0.1:8125")
    for doc in (capabilities_document(load_device_config()), capabilities_document(load_device_config(), served)):
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
        assert errors == []
    assert doc["interfaces"] == {"cookwalaHttp": "http://127.0.0.1:8125", "ros2": {
        "namespace": "/robot_a", "actionServer": "/robot_a/executor/execute_recipe",
        "x-executeNode": "/robot_a/executor/execute_node"}}


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["executor"].update(http_port=70000), "executor.http_port: must be 0..65535"),
        (lambda d: d["executor"].update(http_port="8080"), "executor.http_port: expected an integer"),
        (lambda d: d["executor"].update(http_port=True), "executor.http_port: expected an integer"),
        (lambda d: d["executor"].update(catalog_url="ftp://x"), "executor.catalog_url: expected an http(s) URL"),
        (lambda d: d["executor"].update(http_bind="127.0.0.1:8080"),
         "executor.http_bind: '127.0.0.1:8080' is not an IP address or host name (e.g. 127.0.0.1, 0.0.0.0, ::1, "
         "localhost); the port goes in executor.http_port"),
        (lambda d: d["executor"].update(http_bind="999.1.1.1"), "executor.http_bind: '999.1.1.1' is not an IP address"),
        (lambda d: d["executor"].update(http_bind="local host"), "executor.http_bind: 'local host' is not an IP address"),
        (lambda d: d["executor"].update(http_bind="http://localhost"), "executor.http_bind: 'http://localhost' is not"),
        (lambda d: d["executor"].update(http_bind="[::1]"), "executor.http_bind: '[::1]' is not an IP address"),
        (lambda d: d["executor"].update(require_signed_recipes="yes"), "executor.require_signed_recipes: expected true or false"),
        (lambda d: d["executor"].update(recall_poll_s=0), "executor.recall_poll_s: must be > 0"),
        (lambda d: d.update(safety_limits=[3]), "safety_limits[0]: expected a file path"),
        (lambda d: d["executor"].update(safety_limits=["x.json"]), "executor.safety_limits: the packs are named once"),
        (lambda d: d.update(interfaces={"http_url": "http://x"}), "interfaces: no longer written by hand"),
        (lambda d: d["heaters"][0].update(state_topic="heater state"), "heaters[0].state_topic: 'heater state' is not a ROS name"),
        (lambda d: d["safety_monitor"].update(heartbeat_lease_s="fast"), "safety_monitor.heartbeat_lease_s: expected a number"),
        (lambda d: d["safety_monitor"].update(lease_s=1.0), "safety_monitor.lease_s: unknown key"),
        (lambda d: d["executor"].update(data_directory="/x"), "executor.data_directory: unknown key"),
        (lambda d: d["equipment"][0].update(**{"class": "pot"}), "equipment[0].class: expected an id starting with 'cw.eq.'"),
        (lambda d: d["equipment"][0].update(count=0), "equipment[0].count: must be >= 1"),
    ],
)
def test_bad_executor_and_equipment_entries_are_named(raw_device, mutate, message):
    bad = copy.deepcopy(raw_device)
    mutate(bad)
    with pytest.raises(DeviceConfigError) as excinfo:
        parse_device_config(bad)
    assert message in str(excinfo.value)


def test_robot_files_give_joint_names_and_poses():
    from cookwala_ros.device import load_robot_files

    robot = load_robot_files(load_device_config())
    assert len(robot.joint_names) == 6 and "home" in robot.poses
    assert all(set(pose) == set(robot.joint_names) for pose in robot.poses.values())


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d, tmp: d["arm"].update(robot_description=str(tmp / "missing.urdf")), "arm.robot_description: cannot read URDF"),
        (lambda d, tmp: d["arm"].update(poses=str(tmp / "missing.yaml")), "arm.poses: no such file"),
        (lambda d, tmp: (tmp / "poses.yaml").write_text("poses:\n  home: {shoulder_pan_joint: 0.0}\n")
         and d["arm"].update(poses=str(tmp / "poses.yaml")), "arm.poses:"),
        (lambda d, tmp: d["executor"].update(trusted_keys=str(tmp / "none.json")), "executor.trusted_keys: cannot read"),
        (lambda d, tmp: (tmp / "keys.json").write_text('[{"kid": 1}]') and d["executor"].update(trusted_keys=str(tmp / "keys.json")),
         "executor.trusted_keys:"),
    ],
)
def test_files_named_in_the_device_file_are_checked(raw_device, tmp_path, edit, message):
    from cookwala_ros.device import load_robot_files, load_trusted_keys

    bad = copy.deepcopy(raw_device)
    edit(bad, tmp_path)
    config = parse_device_config(bad)
    with pytest.raises(DeviceConfigError) as excinfo:
        load_robot_files(config)
        load_trusted_keys(config)
    assert message in str(excinfo.value)


@pytest.mark.parametrize("section, key, content, message", [
    ("arm", "poses", b"- home\n- stir\n", "expected a mapping at the top level"),  # once an AttributeError traceback
    ("arm", "poses", b'"poses"', "expected a mapping at the top level"),
    ("arm", "poses", b"poses: " + b"[" * 3000 + b"]" * 3000, "nested more than 64 levels deep"),  # once a RecursionError
    ("arm", "poses", b"poses:\n  home: {shoulder_pan_joint: z\xe9ro}\n", "not UTF-8"),
    ("arm", "poses", b"poses:\n  home: {shoulder_pan_joint: [0.0]}\n", "poses.home.shoulder_pan_joint must be a number"),
    ("executor", "trusted_keys", b"[" * 2000 + b"]" * 2000, "nested more than 64 levels deep"),
    ("executor", "trusted_keys", b"- kid: caf\xe9\n", "not UTF-8"),
])
def test_a_hostile_file_the_device_file_names_is_a_device_config_error_naming_it(raw_device, tmp_path, section, key,
                                                                                  content, message):
    """Issue 15: the arm's poses file or the trusted keys of the wrong shape, nesting or encoding
    give one message naming the key and the file, never a traceback."""
    from cookwala_ros.device import load_robot_files, load_trusted_keys

    named = tmp_path / f"{key}.yaml"
    named.write_bytes(content)
    bad = copy.deepcopy(raw_device)
    bad[section][key] = str(named)
    load = load_robot_files if key == "poses" else load_trusted_keys
    with pytest.raises(DeviceConfigError) as excinfo:
        load(parse_device_config(bad))
    assert f"{section}.{key}: {named}: " in str(excinfo.value) and message in str(excinfo.value), excinfo.value


def test_declared_vessels_reach_the_capabilities(raw_device):
    doc = capabilities_document(parse_device_config(raw_device))
    assert [v["class"] for v in doc["capabilities"]["vessels"]] == [
        e["class"] for e in raw_device["equipment"] if e["class"].startswith("cw.eq.vessel.")]

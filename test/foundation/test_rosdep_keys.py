"""rosdep keys of both package.xml files resolve, so the README's `rosdep install` can succeed.

CI has neither rosdep nor network: tools/rosdep_keys.yaml records how every key resolved against a
ros/rosdistro checkout (tools/check_rosdep_keys.py); this test fails when a package.xml names a key
that record lacks, so a new key is checked against the real rosdistro before it lands.
"""

from __future__ import annotations

import pathlib
import runpy

import yaml

TOOL = pathlib.Path(__file__).parents[2] / "tools" / "check_rosdep_keys.py"
package_keys = runpy.run_path(str(TOOL))["package_keys"]


def test_every_rosdep_key_of_both_packages_was_resolved_against_rosdistro(repo_root):
    recorded = yaml.safe_load((repo_root / "tools" / "rosdep_keys.yaml").read_text())
    assert recorded["distro"] == "kilted" and len(recorded["rosdistro_commit"]) == 40
    keys = package_keys()
    assert set(keys) == {"package.xml", "cookwala_msgs/package.xml"}
    for package_file, file_keys in keys.items():
        assert file_keys, f"{package_file} names no dependency: the parser read nothing"
        unknown = sorted(set(file_keys) - set(recorded["keys"]))
        assert not unknown, f"{package_file}: keys not checked against rosdistro: {unknown}"


def test_ament_python_is_a_build_type_not_a_key(repo_root):
    assert "ament_python" not in {k for ks in package_keys().values() for k in ks}
    assert "<build_type>ament_python</build_type>" in (repo_root / "package.xml").read_text()


def test_readme_rosdep_command_names_both_package_paths(repo_root):
    """`--from-paths src` alone misses the nested cookwala_msgs (colcon's base paths name both too)."""
    readme = (repo_root / "README.md").read_text()
    commands = [line for line in readme.splitlines() if line.strip().startswith("rosdep install")]
    assert commands, "README has no rosdep install line"
    for line in commands:
        assert "src/cookwala_ros " in line + " " and "src/cookwala_ros/cookwala_msgs" in line, line


def test_readme_pins_of_the_keyless_packages_are_the_requirements_pins(repo_root):
    pins = {line.split("==")[0]: line.strip() for line in (repo_root / "requirements" / "python.txt").read_text().splitlines()
            if "==" in line and not line.lstrip().startswith("#")}
    readme = (repo_root / "README.md").read_text()
    pip_lines = [line for line in readme.splitlines() if line.strip().startswith("pip install") and "pynacl" in line]
    assert pip_lines, "README has no pip line for the packages without a rosdep key"
    for name in ("pynacl", "rfc8785"):
        assert pins[name] in pip_lines[0], f"README pins {name} other than requirements/python.txt ({pins[name]})"

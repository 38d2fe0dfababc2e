"""The live simulated kitchen for end-to-end tests: real processes, real ROS, real HTTP.

One kitchen per module (start-up costs seconds): sim clock, arm, heater and the executor with
its HTTP API on a free port, a temporary data dir holding the sample recipes, and this process
playing the person in the kitchen (/cookwala/presence) and watching /heater/state. The safety
monitor is left out here so that a loaded CI host cannot trip it mid-test (its own tests cover
it); `cookwala-ros up kitchen` and the demo run it.
"""

from __future__ import annotations


import pytest

from e2e_http import E2E_RTF, REPO


@pytest.fixture(scope="module")
def live_kitchen():
    from cookwala_ros.ros.recipe_demo import LiveKitchen

    recipes = [REPO / "examples" / "recipes" / name for name in ("tomato-soup.cookwala.json", "chips-deep-fry.cookwala.json")]
    recipes.append(REPO / "test" / "e2e" / "data" / "recipes" / "e2e-water-simmer.cookwala.json")
    kitchen = LiveKitchen(rtf=E2E_RTF, recipes=recipes, with_safety_monitor=False, startup_timeout_s=90.0)
    kitchen.start()
    yield kitchen
    kitchen.stop()

"""The live simulated kitchen for end-to-end tests: real processes, real ROS, real HTTP.

One kitchen per module (start-up costs seconds): the shipped `kitchen` scene (sim clock, arm,
heater, pot_sim, the executor with its HTTP API on a free port, and the safety monitor), a
temporary data dir holding the sample recipes, and this process playing the person in the
kitchen (/cookwala/presence), watching /heater/state and, before each test, re-arming a monitor
that an earlier test's stop latched (a local reset, as the person does).
"""

from __future__ import annotations


import pytest

from e2e_http import E2E_RTF, REPO


@pytest.fixture(scope="module")
def live_kitchen():
    from cookwala_ros.ros.recipe_demo import LiveKitchen

    recipes = [REPO / "examples" / "recipes" / name for name in ("tomato-soup.cookwala.json", "chips-deep-fry.cookwala.json")]
    recipes.append(REPO / "test" / "e2e" / "data" / "recipes" / "e2e-water-simmer.cookwala.json")
    kitchen = LiveKitchen(rtf=E2E_RTF, recipes=recipes, startup_timeout_s=90.0)
    kitchen.start()
    yield kitchen
    kitchen.stop()


@pytest.fixture(autouse=True)
def _armed_kitchen(request):
    """Each test that cooks in the module's kitchen starts with its safety monitor armed."""
    if "live_kitchen" in request.fixturenames:
        request.getfixturevalue("live_kitchen").reset_safety()

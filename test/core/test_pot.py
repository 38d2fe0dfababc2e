"""What the pot holds (core.pot): the sim's cook and the engine agree, and the engine does not
judge a heat step on readings of a pot that still shows its old contents."""

from __future__ import annotations

import pytest

from cookwala_ros.core import pot
from cookwala_ros.core.engine import CONTENTS_WAIT_S
from test_engine_kitchen import SimKitchen, make_run, soup


def test_contents_follow_the_ingredients_servings_and_lid():
    recipe = soup()
    nodes = {n["id"]: n for n in recipe["process"]["nodes"]}
    oil = pot.contents(recipe, nodes["n1"], "oil")
    assert oil == {"medium": "oil", "mass_kg": 0.05, "lid": False}  # 20 ml: the minimum thermal mass
    simmer = pot.contents(recipe, nodes["n3"], "water", pot.servings_factor(recipe, 8))
    assert simmer["medium"] == "water" and simmer["lid"] is False  # "ajar" is not "on"
    assert simmer["mass_kg"] == pytest.approx(2 * (20 + 150 + 6 + 800 + 500) / 1000.0)
    assert pot.contents(recipe, nodes["n5"], "product", current=simmer)["medium"] == "water"  # kept
    assert pot.contents(recipe, nodes["n5"], "water")["lid"] is True
    assert not pot.differs(simmer, dict(simmer, mass_kg=simmer["mass_kg"] * 1.04))
    assert pot.differs(simmer, dict(simmer, mass_kg=simmer["mass_kg"] * 1.06))
    assert pot.reported(simmer, "water", simmer["mass_kg"]) and not pot.reported(simmer, "oil", simmer["mass_kg"])
    assert not pot.reported(simmer, "water", 1.0)


def test_the_cook_following_the_status_puts_in_what_the_engine_assumes():
    kitchen = SimKitchen()
    run = make_run(soup(), kitchen)
    believed: list[dict] = []

    def record(engine, _kitchen):
        if engine.heater_setup is not None and (not believed or believed[-1] != engine.heater_setup):
            believed.append(dict(engine.heater_setup))

    kitchen.run(run, on_tick=record)
    assert run.state == "completed"
    assert kitchen.setups == believed
    assert [s["medium"] for s in believed][:3] == ["pan_surface", "pan_surface", "water"]  # heat oil, sauté, simmer


class SlowCookKitchen(SimKitchen):
    """A hob that reports what its pot holds, whose cook fills the pot `delay_s` late (or never)."""

    def __init__(self, delay_s: float | None, **kwargs):
        super().__init__(**kwargs)
        self.delay_s = delay_s
        self._due: list[tuple[float, dict]] = []

    def put_in_pot(self, setup: dict) -> None:
        if self.delay_s is not None:
            self._due.append((self.t + self.delay_s, setup))

    def step(self) -> None:
        super().step()
        while self._due and self._due[0][0] <= self.t:
            SimKitchen.put_in_pot(self, self._due.pop(0)[1])

    def observe(self):
        obs = super().observe()
        obs.pot_medium, obs.pot_mass_kg = self.thermal.config.medium, self.thermal.config.medium_mass_kg
        return obs


def _through_the_first_simmer(delay_s: float | None):
    """Run the soup until its blend (n4); per tick (time, node, awaiting, heater command sent)."""
    kitchen = SlowCookKitchen(delay_s)
    run = make_run(soup(), kitchen)
    ticks: list[tuple[float, str | None, bool, tuple | None]] = []
    sent = [0]

    def record(engine, k):
        command = k.commands[-1].heater if len(k.commands) > sent[0] else None
        sent[0] = len(k.commands)
        ticks.append((k.t, engine.status().get("node"), engine.awaiting_contents, command))

    kitchen.run(run, on_tick=record, until=lambda engine, k: engine.status().get("node") == "n4")
    return run, kitchen, ticks


def test_a_heat_step_waits_until_the_hob_shows_its_contents():
    run, kitchen, ticks = _through_the_first_simmer(delay_s=6.0)
    waiting = [(t, node, command) for t, node, awaiting, command in ticks if awaiting]
    assert waiting, "the engine never waited for the pot"
    assert {node for _, node, _ in waiting} == {"n3"}  # the simmer: the pan's oil and onions become soup
    assert 4.5 <= waiting[-1][0] - waiting[0][0] <= 6.5  # the cook's delay, in ticks of 0.5 s
    assert [command for _, _, command in waiting if command is not None] == []  # no control on old readings
    assert [s["medium"] for s in kitchen.setups][:3] == ["pan_surface", "pan_surface", "water"]
    assert run.status().get("node") == "n4"  # the simmer went on once the pot showed the water


def test_a_hob_that_never_shows_the_contents_is_waited_for_a_bounded_time():
    run, kitchen, ticks = _through_the_first_simmer(delay_s=None)
    waiting = [t for t, node, awaiting, _ in ticks if awaiting]
    assert waiting and CONTENTS_WAIT_S - 1.0 <= waiting[-1] - waiting[0] <= CONTENTS_WAIT_S + 1.0
    assert run.status().get("node") == "n4"  # then it goes on with what the sensors say

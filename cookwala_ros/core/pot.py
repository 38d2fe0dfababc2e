"""What the pot holds at a heat step: medium, mass and lid, from the recipe alone (pure).

A heat step heats what has flowed into it: the medium its op's envelope names, the mass of every
ingredient upstream of it (scaled to the servings cooked), a lid when its params say so. The
engine's thermal estimate and the simulated kitchen's cook (ros/pot_sim_node.py, which follows
the executor's public status) both take the contents from here, so the simulated pot holds what
the engine believes it holds without the engine telling the simulator anything.
"""

from __future__ import annotations

from typing import Any

from cookwala_ros.core import units, vocab

# envelope medium -> what the hob's pot holds
HEATER_MEDIUM = {"water": "water", "steam": "water", "pressure": "water", "oil": "oil", "air": "air",
                 "pan_surface": "pan_surface"}
DEFAULT_MEDIUM = "water"
MIN_MASS_KG = 0.05
MASS_CHANGE = 0.05  # a relative mass change below this is the same contents
MASS_MATCH = 0.01  # a hob reporting its contents holds the set-up within this share of the mass


def is_heat_step(op_id: str) -> bool:
    """Ops the hob heats for: the heat family, and hot holding."""
    if not vocab.is_known_op(op_id):
        return False
    record = vocab.op(op_id)
    env = record.get("envelope") or {}
    heats = "heat" in (record.get("families") or []) or op_id == "cw.op.hold"
    return heats and "tempBandC" in env and env.get("medium") in (set(HEATER_MEDIUM) | {"product"})


def servings_factor(recipe: dict, servings: Any) -> float:
    """Scale of the recipe's quantities for `servings` (1 when either is unknown)."""
    base = (recipe.get("yield") or {}).get("servings")
    if isinstance(base, (int, float)) and base > 0 and isinstance(servings, (int, float)) and servings > 0:
        return float(servings) / float(base)
    return 1.0


def node_mass_kg(recipe: dict, node: dict, factor: float = 1.0) -> float:
    """Mass of every ingredient that has flowed into `node` (water-like density for volumes)."""
    grams: dict[str, float] = {}
    for ing in recipe.get("ingredients") or []:
        qty = ing.get("qty") if isinstance(ing, dict) else None
        try:
            grams[ing["ref"]] = float(units.convert(qty["value"], qty["unit"], "g", qty.get("densityGPerMl", 1)))
        except Exception:  # pieces, unknown units: they do not count towards the thermal mass
            continue
    nodes = [n for n in (recipe.get("process") or {}).get("nodes") or [] if isinstance(n, dict)]
    producers = {n.get("output"): n for n in nodes if isinstance(n.get("output"), str)}
    seen: set[str] = set()

    def total(n: dict) -> float:
        if n.get("id") in seen:
            return 0.0
        seen.add(n.get("id"))
        out = 0.0
        for ref in n.get("inputs") or []:
            if ref in grams:
                out += grams[ref]
            elif ref in producers:
                out += total(producers[ref])
        return out

    return max(MIN_MASS_KG, total(node) * factor / 1000.0)


def contents(recipe: dict, node: dict, env_medium: str | None, factor: float = 1.0,
             current: dict | None = None) -> dict:
    """{medium, mass_kg, lid} in the pot while `node` heats; an envelope medium the hob does not
    hold (e.g. product) keeps the `current` medium."""
    current = current or {}
    medium = HEATER_MEDIUM.get(env_medium or "") or current.get("medium") or DEFAULT_MEDIUM
    lid = (node.get("params") or {}).get("lid") == "on"
    return {"medium": medium, "mass_kg": round(node_mass_kg(recipe, node, factor), 3), "lid": lid}


def differs(current: dict | None, new: dict) -> bool:
    """Whether `new` contents are a change from `current` (None: nothing set yet)."""
    current = current or {}
    mass = new["mass_kg"]
    return (new["medium"] != current.get("medium") or new["lid"] != current.get("lid")
            or abs(mass - current.get("mass_kg", 0.0)) > MASS_CHANGE * max(mass, 1e-3))


def reported(setup: dict, medium: str | None, mass_kg: float | None) -> bool:
    """Whether a hob reporting `medium` and `mass_kg` holds the `setup` contents."""
    if medium != setup["medium"]:
        return False
    if medium == "pan_surface" or mass_kg is None:
        return True
    return abs(mass_kg - setup["mass_kg"]) <= MASS_MATCH * max(setup["mass_kg"], 1e-3)


class PotCook:
    """The kitchen's cook, as far as the pot goes: told which node an execution runs now (its
    public status), says what to put in the pot, the same contents the engine assumes (the
    rule above, applied in the same order), or None when the pot stays as it is."""

    def __init__(self, recipe: dict, servings: Any = None):
        self.recipe = recipe
        self.factor = servings_factor(recipe, servings)
        self._nodes = {n.get("id"): n for n in (recipe.get("process") or {}).get("nodes") or [] if isinstance(n, dict)}
        self._node: str | None = None
        self.current: dict | None = None  # what the pot holds since the last change

    def step(self, node_id: str | None) -> dict | None:
        """New contents when `node_id` is a heat step that changes what the pot holds."""
        if node_id == self._node:
            return None
        self._node = node_id
        node = self._nodes.get(node_id)
        if node is None or not is_heat_step(str(node.get("op"))):
            return None
        env_medium = (vocab.envelope(node["op"]) or {}).get("medium")
        new = contents(self.recipe, node, env_medium, self.factor, self.current)
        if not differs(self.current, new):
            return None
        self.current = new
        return dict(new)

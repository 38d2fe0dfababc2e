"""Which named poses a motion step goes through.

The executor moves the arm only between named poses (config/robot/poses.yaml): the adapter
turns each name into a joint trajectory, the engine waits until the arm reports it is at the
pose and still. A step's route depends on its op (and `params.method` for transfers); poses
the device does not have are left out, so an arm with fewer poses still runs what it can.
Ops without a route here are done without the arm (time rung).
"""

from __future__ import annotations

from typing import Iterable

HOME = "home"
RESEND_S = 2.0  # a pose command the arm rests short of is sent again this often [s of the run's clock]

# op -> poses in order (the arm ends each route above the hob, clear of the pan)
ROUTES: dict[str, tuple[str, ...]] = {
    "cw.op.dispense": ("dispense", "above_hob", "pour", "above_hob"),
    "cw.op.season": ("dispense", "above_hob", "pour", "above_hob"),
    "cw.op.transfer": ("above_hob", "pour", "above_hob"),
    "cw.op.mix": ("above_hob", "stir", "above_hob"),
    "cw.op.whisk": ("above_hob", "stir", "above_hob"),
    "cw.op.fold": ("above_hob", "stir", "above_hob"),
    "cw.op.plate": ("above_hob", "serve", HOME),
    "cw.op.serve": ("above_hob", "serve", HOME),
    "cw.op.garnish": ("dispense", "serve", HOME),
}
STIR_ROUTE = ("above_hob", "stir", "above_hob")
TRANSFER_METHODS = {"scoop": ("above_hob", "stir", "above_hob", "serve", "above_hob"),
                    "ladle": ("above_hob", "stir", "above_hob", "serve", "above_hob")}


def route(node: dict, available: Iterable[str]) -> list[str]:
    """Poses a node's op goes through, restricted to the `available` named poses."""
    have = set(available)
    op_id = node.get("op")
    poses = ROUTES.get(op_id, ())
    method = (node.get("params") or {}).get("method")
    if op_id == "cw.op.transfer" and method in TRANSFER_METHODS:
        poses = TRANSFER_METHODS[method]
    return _dedupe([p for p in poses if p in have])


def stir_route(available: Iterable[str]) -> list[str]:
    """Poses of one stir during a heat step with `params.stir`."""
    have = set(available)
    return _dedupe([p for p in STIR_ROUTE if p in have])


def resend_due(since_s: float, dt: float, moving: bool) -> bool:
    """Send a pose command again? Yes each RESEND_S after it was sent while the arm rests short of
    the pose: a command can be lost (the safety monitor's gate drops one that waited in its queue
    too long on a loaded host; the first one may go out before the arm controller is discovered),
    and the arm would then wait for it forever. A moving arm is on its way."""
    return not moving and since_s // RESEND_S > (since_s - dt) // RESEND_S


def is_motion_op(op_id: str) -> bool:
    return op_id in ROUTES


def _dedupe(poses: list[str]) -> list[str]:
    """Drop a pose repeated back to back (left behind when the pose between was missing)."""
    out: list[str] = []
    for p in poses:
        if not out or out[-1] != p:
            out.append(p)
    return out

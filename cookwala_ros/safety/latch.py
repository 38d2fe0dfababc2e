"""The monitor's latched stop on disk, so it survives a restart of the monitor or of the scene.

A stop is only ever cleared by a local reset (CORE §6.2). A monitor that restarts forgets its
state, so while it is stopped or in fault it keeps a small JSON file in its `state_dir`; a new
monitor that finds one comes up stopped (`latched_before_restart`) until a local reset, which
removes the file. Writes are atomic (temp file, fsync, rename), so a crash mid-write leaves the
old file or the new one. A file that cannot be read is treated as a latch (fail safe).
"""

from __future__ import annotations

import json
import os
import pathlib
import tempfile
from dataclasses import asdict, dataclass, field

LATCH_FILE = "safety_latch.json"
LATCHED_BEFORE_RESTART = "latched_before_restart"


@dataclass(frozen=True)
class Latch:
    state: str  # stopped | fault
    trigger: str  # the episode's first trigger
    reason: str
    triggers: list[str] = field(default_factory=list)  # active when written
    wall_time: str = ""  # RFC 3339, UTC
    corrupt: bool = False  # the file was there but unreadable

    def to_json(self) -> str:
        data = asdict(self)
        data.pop("corrupt")
        return json.dumps(data, indent=1, sort_keys=True)


def path_of(state_dir: str | os.PathLike) -> pathlib.Path:
    return pathlib.Path(state_dir) / LATCH_FILE


def write(state_dir: str | os.PathLike, latch: Latch) -> None:
    """Atomically replace the latch file (the directory must exist)."""
    target = path_of(state_dir)
    fd, tmp = tempfile.mkstemp(prefix=".latch-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(latch.to_json())
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


def read(state_dir: str | os.PathLike) -> Latch | None:
    """The persisted latch, None when there is none; an unreadable file is a latch (corrupt=True)."""
    target = path_of(state_dir)
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Latch("stopped", "", f"latch file {target} unreadable ({exc})", corrupt=True)
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("reason"), str):
            raise ValueError("not a latch record")
        triggers = data.get("triggers", [])
        return Latch(state=str(data.get("state", "stopped")), trigger=str(data.get("trigger", "")),
                     reason=data["reason"], triggers=[str(t) for t in triggers] if isinstance(triggers, list) else [],
                     wall_time=str(data.get("wall_time", "")))
    except ValueError as exc:
        return Latch("stopped", "", f"latch file {target} is corrupt ({exc})", corrupt=True)


def clear(state_dir: str | os.PathLike) -> None:
    try:
        path_of(state_dir).unlink()
    except FileNotFoundError:
        pass

"""The executor's SQLite database: executions, status seq, idempotency keys, logs, events, recalls.

One file (`executor.sqlite3` in the data dir) in WAL mode. Transactions are `durable` by default
(`synchronous=FULL`: on disk when the commit returns), so anything acknowledged to a client
survives a crash (SIGKILL or power loss); high-rate progress updates may commit without an fsync
(still safe against a process crash). Callers group related writes in `transaction()`; the status, its event and the
idempotency record of a request are committed together or not at all. One connection shared by
threads, serialised by a lock: the executor's write rate (a few per second) does not need more.

One executor per data dir: the executor's Store (`exclusive=True`) takes an exclusive `flock` on `executor.lock` in the
data dir (held until the process's last Store of that dir is closed, or the process dies, which
the kernel notices even after a SIGKILL) before the database is touched, so a second executor
process exits with DataDirInUse naming the pid that holds it and cannot mark the first one's live
execution failed. Stores of one process share the lock (tests open a dir twice to play a restart).

The running log's temperature trace is appended row by row to `trace_rows` as the engine samples
it (commits without an fsync: cheap, and they survive a process crash), so a crash loses at most
the row being sampled; the full log JSON is rewritten only on step and state changes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import pathlib
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

DB_NAME = "executor.sqlite3"
LOCK_NAME = "executor.lock"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS executions (
    id TEXT PRIMARY KEY,
    request_id TEXT NOT NULL,
    request_json TEXT NOT NULL,
    recipe_ref TEXT NOT NULL,
    recipe_hash TEXT NOT NULL,
    state TEXT NOT NULL,
    seq INTEGER NOT NULL,
    final INTEGER NOT NULL,
    status_json TEXT NOT NULL,
    log_json TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS executions_active ON executions (final);
CREATE TABLE IF NOT EXISTS idempotency (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE TABLE IF NOT EXISTS events (
    ordinal INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    execution_id TEXT,
    seq INTEGER,
    type TEXT NOT NULL,
    event_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_execution ON events (execution_id, ordinal);
CREATE TABLE IF NOT EXISTS trace_rows (
    execution_id TEXT NOT NULL,
    t_s REAL NOT NULL,
    row_json TEXT NOT NULL,
    PRIMARY KEY (execution_id, t_s)
);
CREATE TABLE IF NOT EXISTS recalls (
    id TEXT PRIMARY KEY,
    recall_json TEXT NOT NULL,
    fetched_at REAL NOT NULL
);
"""


@dataclass(frozen=True)
class ExecutionRow:
    id: str
    request_id: str
    request: dict
    recipe_ref: str
    recipe_hash: str
    state: str
    seq: int
    final: bool
    status: dict
    log: dict | None


class DataDirInUse(ValueError):
    """Another process holds the data dir's lock (a ValueError: a node reports it in one line)."""


class DataDirUnusable(ValueError):
    """The data dir cannot be created, written or opened as a database (a node reports it in one line)."""


_HELD: dict[str, list[int]] = {}  # lock file path -> [descriptor, Stores of this process using it]
_HELD_LOCK = threading.Lock()


def lock_data_dir(folder: pathlib.Path) -> str:
    """Take the data dir's exclusive lock for this process; returns the key to `unlock_data_dir`.

    Raises DataDirInUse naming the folder and the holder's pid (written into the lock file by
    the holder). The descriptor is not inherited by child processes (Python's default).
    """
    key = os.path.realpath(folder / LOCK_NAME)
    with _HELD_LOCK:
        held = _HELD.get(key)
        if held is not None:
            held[1] += 1
            return key
        _HELD[key] = [_flock(folder, pathlib.Path(key)), 1]
    return key


def unlock_data_dir(key: str) -> None:
    with _HELD_LOCK:
        held = _HELD.get(key)
        if held is None:
            return
        held[1] -= 1
        if held[1] <= 0:
            del _HELD[key]
            os.close(held[0])


def _flock(folder: pathlib.Path, path: pathlib.Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = ""
        try:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        except OSError:
            pass
        os.close(fd)
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise DataDirInUse(f"data_dir {folder}: cannot lock {path}: {exc.strerror}") from None
        who = f"pid {holder}" if holder.isdigit() else "another process"
        raise DataDirInUse(f"data_dir {folder} is in use by another executor ({who}); "
                           "one executor per data dir") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    return fd


class Store:
    """Typed access to the database; every method is thread-safe."""

    def __init__(self, data_dir: str | pathlib.Path, *, exclusive: bool = False):
        """`exclusive`: the executor's own store, which holds the data dir's lock (DataDirInUse
        when another process holds it); tools that only look at a database leave it False."""
        self.dir = pathlib.Path(data_dir).expanduser()
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataDirUnusable(f"data dir {self.dir}: cannot create it ({exc.strerror or exc})") from None
        self.path = self.dir / DB_NAME
        try:
            self._lock_key = lock_data_dir(self.dir) if exclusive else None  # before the database is opened
        except OSError as exc:
            raise DataDirUnusable(f"data dir {self.dir}: cannot write its lock file ({exc.strerror or exc})") from None
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.Error as exc:
            if self._lock_key is not None:
                unlock_data_dir(self._lock_key)
            raise DataDirUnusable(f"data dir {self.dir}: cannot open {DB_NAME} ({exc})") from None
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(_SCHEMA)
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        self._depth = 0

    # ------------------------------------------------------------------ plumbing

    @contextlib.contextmanager
    def transaction(self, durable: bool = True) -> Iterator[None]:
        """Group writes; nested use joins the outer transaction. Committed on exit: on disk
        (fsync) when `durable`, else in the WAL (survives a process crash, maybe not power loss)."""
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
                self._db.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outer:
                    self._db.execute("ROLLBACK")
                raise
            self._depth -= 1
            if outer:
                self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()
            self.release_lock()

    def release_lock(self) -> None:
        """Give up this Store's hold on the data dir's lock (the process's last one frees it)."""
        key, self._lock_key = self._lock_key, None
        if key is not None:
            unlock_data_dir(key)

    def _one(self, sql: str, args: tuple = ()) -> tuple | None:
        with self._lock:
            return self._db.execute(sql, args).fetchone()

    def _all(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def _run(self, sql: str, args: tuple = ()) -> None:
        with self.transaction():
            self._db.execute(sql, args)

    # ------------------------------------------------------------------ executions

    def insert_execution(self, status: dict, request: dict, recipe_ref: str, recipe_hash: str,
                         final: bool, created_at: float) -> None:
        self._run(
            "INSERT INTO executions (id, request_id, request_json, recipe_ref, recipe_hash, state, seq, final,"
            " status_json, log_json, created_at) VALUES (?,?,?,?,?,?,?,?,?,NULL,?)",
            (status["id"], status["request"], _dump(request), recipe_ref, recipe_hash, status["state"],
             status["seq"], int(final), _dump(status), created_at),
        )

    def update_status(self, status: dict, final: bool, log: dict | None = None) -> None:
        with self.transaction():
            self._db.execute(
                "UPDATE executions SET state=?, seq=?, final=?, status_json=? WHERE id=?",
                (status["state"], status["seq"], int(final), _dump(status), status["id"]),
            )
            if log is not None:
                self._db.execute("UPDATE executions SET log_json=? WHERE id=?", (_dump(log), status["id"]))

    def save_log(self, execution_id: str, log: dict) -> None:
        self._run("UPDATE executions SET log_json=? WHERE id=?", (_dump(log), execution_id))

    # ------------------------------------------------------------------ trace rows

    def append_trace(self, execution_id: str, rows: list[list]) -> None:
        """Append trace rows ([t_s, ...], t_s increasing) of a running execution; no fsync."""
        if not rows:
            return
        with self.transaction(durable=False):
            self._db.executemany("INSERT OR REPLACE INTO trace_rows VALUES (?,?,?)",
                                 [(execution_id, float(r[0]), _dump(r)) for r in rows])

    def trace_rows(self, execution_id: str, after_t_s: float | None = None) -> list[list]:
        """The appended rows of an execution (later than `after_t_s`), by time."""
        rows = self._all("SELECT row_json FROM trace_rows WHERE execution_id=? AND t_s>? ORDER BY t_s",
                         (execution_id, -1e300 if after_t_s is None else float(after_t_s)))
        return [json.loads(r[0]) for r in rows]

    def drop_trace(self, execution_id: str) -> None:
        """Forget the appended rows once the final log (which holds the whole trace) is stored."""
        with self.transaction(durable=False):
            self._db.execute("DELETE FROM trace_rows WHERE execution_id=?", (execution_id,))

    def execution(self, execution_id: str) -> ExecutionRow | None:
        row = self._one(
            "SELECT id, request_id, request_json, recipe_ref, recipe_hash, state, seq, final, status_json, log_json"
            " FROM executions WHERE id=?", (execution_id,))
        return _row(row) if row else None

    def active_executions(self) -> list[ExecutionRow]:
        rows = self._all(
            "SELECT id, request_id, request_json, recipe_ref, recipe_hash, state, seq, final, status_json, log_json"
            " FROM executions WHERE final=0 ORDER BY created_at")
        return [_row(r) for r in rows]

    def execution_ids(self) -> list[str]:
        return [r[0] for r in self._all("SELECT id FROM executions ORDER BY created_at")]

    # ------------------------------------------------------------------ idempotency

    def idempotency(self, scope: str, key: str) -> tuple[str, str] | None:
        """(body_hash, execution_id) remembered for this key, or None."""
        row = self._one("SELECT body_hash, execution_id FROM idempotency WHERE scope=? AND key=?", (scope, key))
        return (row[0], row[1]) if row else None

    def remember_key(self, scope: str, key: str, body_hash: str, execution_id: str, at: float) -> None:
        self._run("INSERT INTO idempotency VALUES (?,?,?,?,?)", (scope, key, body_hash, execution_id, at))

    # ------------------------------------------------------------------ events

    def add_event(self, event: dict, execution_id: str | None, seq: int | None) -> None:
        self._run("INSERT OR IGNORE INTO events (id, execution_id, seq, type, event_json) VALUES (?,?,?,?,?)",
                  (event["id"], execution_id, seq, event["type"], _dump(event)))

    def events(self, execution_id: str | None = None, after: int = 0, limit: int = 10000) -> list[tuple[int, dict]]:
        """(ordinal, event) in the order they were stored; optionally one execution's only."""
        if execution_id is None:
            rows = self._all("SELECT ordinal, event_json FROM events WHERE ordinal>? ORDER BY ordinal LIMIT ?",
                             (after, limit))
        else:
            rows = self._all("SELECT ordinal, event_json FROM events WHERE execution_id=? AND ordinal>?"
                             " ORDER BY ordinal LIMIT ?", (execution_id, after, limit))
        return [(r[0], json.loads(r[1])) for r in rows]

    # ------------------------------------------------------------------ recalls

    def replace_recalls(self, recalls: list[dict], at: float) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM recalls")
            for recall in recalls:
                self._db.execute("INSERT OR REPLACE INTO recalls VALUES (?,?,?)",
                                 (str(recall.get("id")), _dump(recall), at))

    def recalls(self) -> list[dict]:
        return [json.loads(r[0]) for r in self._all("SELECT recall_json FROM recalls ORDER BY id")]


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _row(row: tuple) -> ExecutionRow:
    return ExecutionRow(
        id=row[0], request_id=row[1], request=json.loads(row[2]), recipe_ref=row[3], recipe_hash=row[4],
        state=row[5], seq=row[6], final=bool(row[7]), status=json.loads(row[8]),
        log=json.loads(row[9]) if row[9] else None,
    )

"""The device API in a process of its own (a real ExecutorService, no ROS), for wire and memory tests.

Run: `python http_server_proc.py DATA_DIR`; prints `READY <port>` once it serves and runs until
its stdin closes. Tests read its RSS from /proc/<pid>/status.
"""

from __future__ import annotations

import dataclasses
import pathlib
import shutil
import sys

from cookwala_ros.device import load_device_config
from cookwala_ros.executor.config import ExecutorConfig, StaticPorts
from cookwala_ros.executor.service import ExecutorService
from cookwala_ros.http.server import ApiServer, free_port

SOUP = pathlib.Path(__file__).resolve().parents[2] / "examples" / "recipes" / "tomato-soup.cookwala.json"


def main(root: pathlib.Path) -> None:
    library = root / "recipes"
    library.mkdir(parents=True, exist_ok=True)
    shutil.copy(SOUP, library / SOUP.name)
    config = ExecutorConfig.from_device(load_device_config(), data_dir=root / "data")
    service = ExecutorService(dataclasses.replace(config, library_dir=library), StaticPorts(), poll_recalls=False)
    with ApiServer(service, port=free_port()) as server:
        print(f"READY {server.port}", flush=True)
        sys.stdin.read()
    service.close()


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))

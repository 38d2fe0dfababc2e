#!/usr/bin/env bash
# Create or update .venv: ROS 2 Kilted wheels, our Python dependencies, cookwala_msgs built with
# CMake into the venv prefix, and cookwala_ros installed in editable mode.
#
# Idempotent: each stage leaves a stamp in .venv/.cookwala/ holding a hash of its inputs and is
# skipped while the inputs are unchanged. Called by `make setup` (and so by `make demo`/`make test`).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
venv="$repo/.venv"
stamps="$venv/.cookwala"
PYTHON=${PYTHON:-python3}

say() { printf '[setup] %s\n' "$*"; }

# This machine's pip configuration may name local indexes that do not exist; pip then prints one
# warning per package. Hide exactly those lines, keep everything else (and pip's exit status).
pip_install() {
  "$vpy" -m pip install --quiet --disable-pip-version-check "$@" 2> >(grep -v "^WARNING: Location 'file://" >&2)
}

inputs_hash() { cat "$@" 2>/dev/null | sha256sum | cut -d' ' -f1; }

stage_done() {  # stage_done NAME HASH
  [ -f "$stamps/$1" ] && [ "$(cat "$stamps/$1")" = "$2" ]
}

mark_done() { mkdir -p "$stamps"; printf '%s' "$2" > "$stamps/$1"; }

# --- Debian build tools (only when missing) ---------------------------------------------------
need_apt=()
command -v cmake >/dev/null || need_apt+=(cmake)
command -v g++ >/dev/null || need_apt+=(g++)
command -v make >/dev/null || need_apt+=(make)
py_include=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$py_include/Python.h" ] || need_apt+=(python3-dev)
"$PYTHON" -c 'import ensurepip, venv' 2>/dev/null || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  say "installing Debian packages: ${need_apt[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

# --- the venv ---------------------------------------------------------------------------------
if [ ! -x "$venv/bin/python" ]; then
  say "creating $venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv "$venv"
fi
vpy="$venv/bin/python"

deps_hash=$(inputs_hash "$repo"/requirements/*.txt)
if ! stage_done deps "$deps_hash"; then
  say "installing pinned ROS 2 Kilted wheels and Python dependencies (about a minute)"
  pip_install --upgrade 'pip>=24' 'setuptools>=70' wheel
  pip_install \
    -c "$repo/requirements/ros-kilted-constraints.txt" \
    -r "$repo/requirements/ros-kilted.txt" \
    -r "$repo/requirements/ros-build.txt" \
    -r "$repo/requirements/python.txt" \
    -r "$repo/requirements/test.txt"
  mark_done deps "$deps_hash"
fi

# --- cookwala_msgs ----------------------------------------------------------------------------
msgs_hash=$( (find "$repo/cookwala_msgs" "$repo/cmake" -type f | sort | xargs cat; echo "$deps_hash") | sha256sum | cut -d' ' -f1)
if ! stage_done msgs "$msgs_hash"; then
  build="$repo/build/cookwala_msgs"
  say "building cookwala_msgs into the venv (CMake + rosidl, about 2 minutes on 2 cores)"
  rm -rf "$build"
  mkdir -p "$build"
  (
    cd "$build"
    export AMENT_PREFIX_PATH="$venv" VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"
    cmake "$repo/cookwala_msgs" \
      -DCMAKE_PREFIX_PATH="$venv" \
      -DCMAKE_INSTALL_PREFIX="$venv" \
      -DCMAKE_PROJECT_INCLUDE="$repo/cmake/repair_wheel_include_dirs.cmake" \
      -DPython3_EXECUTABLE="$vpy" \
      -DBUILD_TESTING=OFF > configure.log 2>&1 || { tail -40 configure.log; exit 1; }
    cmake --build . -j "$(nproc)" > build.log 2>&1 || { tail -60 build.log; exit 1; }
    cmake --install . > install.log 2>&1 || { tail -20 install.log; exit 1; }
  )
  "$vpy" -c 'import cookwala_msgs.action, cookwala_msgs.srv, cookwala_msgs.msg' \
    || { say "cookwala_msgs was built but does not import"; exit 1; }
  mark_done msgs "$msgs_hash"
fi

# --- cookwala_ros (editable) ------------------------------------------------------------------
pkg_hash=$(inputs_hash "$repo/setup.py" "$repo/setup.cfg" "$repo/package.xml")
if ! stage_done package "$pkg_hash"; then
  say "installing cookwala_ros in editable mode"
  pip_install --no-deps --no-build-isolation -e "$repo" > /dev/null
  mark_done package "$pkg_hash"
fi

"$vpy" -c 'import rclpy, cookwala_msgs.action, cookwala_msgs.srv, cookwala_ros' \
  || { say "the venv does not import rclpy, cookwala_msgs and cookwala_ros"; exit 1; }
say "ready: $venv ($("$vpy" --version))"

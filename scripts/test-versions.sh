#!/usr/bin/env bash
# Runs the test suite under the oldest and newest supported Pythons (3.10 and 3.13), each in its
# own venv, where that interpreter is installed on this machine; says so where it is not.
set -euo pipefail
cd "$(dirname "$0")/.."

find_python() {
  local version=$1 candidate
  for candidate in "python$version" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/python; do
    if "$candidate" -c 'import sys' >/dev/null 2>&1; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

for version in ${VERSIONS:-3.10 3.13}; do
  if ! python=$(find_python "$version"); then
    echo "test-versions: no Python $version on this machine; not tested"
    continue
  fi
  venv=".venv-$version"
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -e '.[dev]'
  echo "test-versions: Python $version"
  "$venv/bin/python" -m pytest -q
done

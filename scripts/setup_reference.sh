#!/usr/bin/env bash
# Makes .venv-reference, a venv holding the reference library mssql-cdc-pyspark 0.8.0 and its
# pinned closure (scripts/requirements-reference.txt), and prints its python's path. A second run
# checks the stamp and returns at once; runs at the same time (test workers) take turns.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-reference
exec 9> "$venv.lock"
flock 9
requirements=scripts/requirements-reference.txt
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [[ ! -x $venv/bin/python || ! -f $venv/.requirements.sha256 || "$(cat $venv/.requirements.sha256)" != "$want" ]]; then
  echo "setup: installing $requirements into $venv" >&2
  rm -rf "$venv"
  # A clean environment: the venv must not see .venv's packages, whose top-level package has the
  # same name.
  env -u PYTHONPATH -u VIRTUAL_ENV python3 -m venv "$venv"
  env -u PYTHONPATH -u VIRTUAL_ENV scripts/pip_install.sh "$venv/bin/python" -q --no-deps -r "$requirements" >&2
  echo "$want" > "$venv/.requirements.sha256"
fi
echo "$PWD/$venv/bin/python"

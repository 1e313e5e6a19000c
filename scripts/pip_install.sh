#!/usr/bin/env bash
# `scripts/pip_install.sh PYTHON ARGS...` runs `PYTHON -m pip install ARGS...`, again up to three
# times when it fails. The package index's downloads are sometimes cut off part-way; pip resumes a
# cut download only within one run, and a later run starts a fresh connection. A failure that is
# not the network's fails every attempt and is reported as pip reported it.
set -uo pipefail
python=$1
shift
export PIP_RESUME_RETRIES=${PIP_RESUME_RETRIES:-20} PIP_RETRIES=${PIP_RETRIES:-10}
for attempt in 1 2 3 4; do
  "$python" -m pip install "$@" && exit 0
  status=$?
  ((attempt < 4)) || break
  echo "setup: pip install $* failed (attempt $attempt of 4); trying again in $((attempt * 10)) s" >&2
  sleep $((attempt * 10))
done
exit "$status"

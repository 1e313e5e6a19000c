#!/usr/bin/env bash
# `make docs`: builds docs/ into a static site in site/ with MkDocs and the Material theme
# (mkdocs.yml), strictly: a broken link or anchor, or a page missing from the navigation, fails
# the build. The tables reference is checked first against what the engine writes.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=.venv/.requirements-docs.sha256
want=$(sha256sum scripts/requirements-docs.txt | cut -d' ' -f1)
if [[ ! -f $stamp || "$(cat $stamp)" != "$want" ]]; then
  scripts/pip_install.sh .venv/bin/python -q -r scripts/requirements-docs.txt
  echo "$want" > "$stamp"
fi
.venv/bin/python scripts/gen_tables_reference.py --check
# Not --quiet: it hides the warnings that --strict counts, and the build would pass them.
log=$(mktemp)
if ! NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --clean --strict > "$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
echo "site/index.html"

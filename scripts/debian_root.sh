#!/usr/bin/env bash
# A minimal Debian 12 root for the wheel's install test (tests/wheel): debootstrap's minbase
# with only what a user's machine brings, Python (python3, python3-venv), the system libraries
# Microsoft ODBC Driver 18 documents (docs/install.md), a Java runtime for Spark mode, and
# none of the build's development packages. Made once into a cache folder and reused while
# the package list is the same; prints the root's path.
#
# The folder is $MSSQL_CDC_DEBIAN_ROOT, by default ~/.cache/mssql-cdc/debian-root. Needs root.
set -euo pipefail
PACKAGES=python3,python3-venv,libltdl7,libkrb5-3,libgssapi-krb5-2,ca-certificates,openjdk-17-jre-headless
root=${MSSQL_CDC_DEBIAN_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/mssql-cdc/debian-root}
want=$(echo "bookworm minbase $PACKAGES" | sha256sum | cut -d' ' -f1)
if [[ -f "$root.sha256" && "$(cat "$root.sha256")" == "$want" ]]; then
  echo "$root"
  exit 0
fi
if ! command -v debootstrap >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends debootstrap >&2
fi
rm -rf "$root" "$root.sha256"
mkdir -p "$(dirname "$root")"
echo "debian root: debootstrap bookworm into $root (once)" >&2
debootstrap --variant=minbase --include="$PACKAGES" bookworm "$root" http://deb.debian.org/debian >&2
rm -rf "$root"/var/cache/apt/archives/*.deb
echo "$want" > "$root.sha256"
echo "$root"

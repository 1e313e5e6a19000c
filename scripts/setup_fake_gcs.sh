#!/usr/bin/env bash
# Builds fake-gcs-server, the Google Cloud Storage emulator the object-store tests start
# (tests/storage/gcs_emulator.py), from the Go module proxy into a cache folder, once: a second
# run finds the binary and returns. v1.56.1 refuses a second upload with ifGenerationMatch=0,
# as GCS does; the Python emulators on PyPI ignore it.
#
# The binary is $MSSQL_CDC_FAKE_GCS, by default ~/.cache/mssql-cdc/fake-gcs-server-<version>.
# Prints its path.
set -euo pipefail
version=v1.56.1
binary=${MSSQL_CDC_FAKE_GCS:-${XDG_CACHE_HOME:-$HOME/.cache}/mssql-cdc/fake-gcs-server-$version}
if [[ -x "$binary" ]]; then
  echo "$binary"
  exit 0
fi
command -v go >/dev/null || { echo "setup_fake_gcs: go is missing (Go 1.24 or later builds fake-gcs-server)" >&2; exit 1; }

echo "setup_fake_gcs: building fake-gcs-server $version into $binary" >&2
mkdir -p "$(dirname "$binary")"
tmp=$(mktemp -d "$(dirname "$binary")/.fake-gcs.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
GOBIN="$tmp/bin" GOPATH="$tmp/gopath" GOCACHE="$tmp/cache" GOFLAGS=-trimpath \
  go install "github.com/fsouza/fake-gcs-server@$version" >&2
mv "$tmp/bin/fake-gcs-server" "$binary"
echo "$binary"

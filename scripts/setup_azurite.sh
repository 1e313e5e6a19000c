#!/usr/bin/env bash
# Installs Azurite, the Azure Storage emulator the object-store tests start (tests/storage/
# azure_emulator.py), from npm into a cache folder, once: a second run finds it and returns.
#
# 3.35.0 is the newest Azurite that declares support for Debian 12's Node.js 18 (3.36 and later
# ask for Node 22). Node.js and npm come from Debian when the machine has neither.
#
# The folder is $MSSQL_CDC_AZURITE, by default ~/.cache/mssql-cdc/azurite-<version>. Prints it.
set -euo pipefail
version=3.35.0
dir=${MSSQL_CDC_AZURITE:-${XDG_CACHE_HOME:-$HOME/.cache}/mssql-cdc/azurite-$version}
main="$dir/node_modules/azurite/dist/src/blob/main.js"
if [[ -f "$main" ]]; then
  echo "$dir"
  exit 0
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup_azurite: installing Node.js and npm from Debian" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nodejs npm >&2
fi

echo "setup_azurite: installing azurite@$version into $dir" >&2
mkdir -p "$(dirname "$dir")"
tmp=$(mktemp -d "$(dirname "$dir")/.azurite.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
npm install --prefix "$tmp" --no-audit --no-fund --silent --no-save "azurite@$version" >&2
[[ -f "$tmp/node_modules/azurite/dist/src/blob/main.js" ]] || { echo "setup_azurite: npm left no azurite in $tmp" >&2; exit 1; }
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "$dir"

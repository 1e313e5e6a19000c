#!/usr/bin/env bash
# Copies the runtime dependencies of a pom from Maven into a cache folder, once: a second run
# sees the folder's stamp (the pom's digest) and returns at once. The folder is swapped in
# whole, so a reader never sees half of it. Prints the folder on stdout.
#
#   scripts/fetch_jars.sh NAME POM FOLDER JAR_GLOB [mvn arguments ...]
#
# NAME prefixes the messages; JAR_GLOB is a jar the folder must hold (checked after the copy
# and before trusting the stamp); the mvn arguments go to dependency:copy-dependencies.
set -euo pipefail
name=$1 pom=$2 dir=$3 must=$4
shift 4
want=$(sha256sum "$pom" | cut -d' ' -f1)

if [[ -f "$dir/.pom.sha256" && "$(cat "$dir/.pom.sha256")" == "$want" ]] \
   && compgen -G "$dir/$must" >/dev/null; then
  echo "$dir"
  exit 0
fi

command -v mvn >/dev/null || { echo "$name: mvn is missing (Debian package maven; scripts/setup.sh installs it)" >&2; exit 1; }
command -v java >/dev/null || { echo "$name: java is missing (Debian package openjdk-17-jdk-headless)" >&2; exit 1; }

echo "$name: fetching the jars of $pom into $dir" >&2
mkdir -p "$(dirname "$dir")"
tmp=$(mktemp -d "$(dirname "$dir")/.$(basename "$dir").XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mvn -q -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
  -DoutputDirectory="$tmp" "$@" >&2
compgen -G "$tmp/$must" >/dev/null || { echo "$name: Maven left no $must in $tmp" >&2; exit 1; }
echo "$want" > "$tmp/.pom.sha256"
rm -rf "$dir.old"
[[ -d "$dir" ]] && mv "$dir" "$dir.old"
mv "$tmp" "$dir"
rm -rf "$dir.old"
trap - EXIT
echo "$dir"

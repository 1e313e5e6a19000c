#!/usr/bin/env bash
# Fetches the Delta Lake (and S3A and ABFS) jars that a local PySpark needs (scripts/spark-jars/pom.xml) from Maven
# into a cache folder, once: a second run sees the stamp and returns at once. Jars that the
# pyspark wheel already ships (Hadoop, Parquet, Jackson, logging, compression codecs) are left
# out so that Spark's own versions are the only ones on the class path.
#
# The folder is $MSSQL_CDC_SPARK_JARS, by default ~/.cache/mssql-cdc/spark-jars; the tests
# (tests/delta/conftest.py) look in the same place. Prints the folder on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pom="$root/scripts/spark-jars/pom.xml"
dir=${MSSQL_CDC_SPARK_JARS:-${XDG_CACHE_HOME:-$HOME/.cache}/mssql-cdc/spark-jars}
want=$(sha256sum "$pom" | cut -d' ' -f1)

if [[ -f "$dir/.pom.sha256" && "$(cat "$dir/.pom.sha256")" == "$want" ]] \
   && compgen -G "$dir/delta-spark_*.jar" >/dev/null; then
  echo "$dir"
  exit 0
fi

command -v mvn >/dev/null || { echo "setup_spark: mvn is missing (Debian package maven; scripts/setup.sh installs it)" >&2; exit 1; }
command -v java >/dev/null || { echo "setup_spark: java is missing (Debian package openjdk-17-jdk-headless)" >&2; exit 1; }

echo "setup_spark: fetching the Delta jars into $dir" >&2
mkdir -p "$(dirname "$dir")"
tmp=$(mktemp -d "$(dirname "$dir")/.spark-jars.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
provided=org.scala-lang,org.apache.parquet,com.fasterxml.jackson.core
provided+=,org.apache.logging.log4j,org.slf4j,org.xerial.snappy,com.github.luben,io.airlift
provided+=,org.roaringbitmap,commons-logging,commons-pool,com.google.code.findbugs,org.locationtech.jts
provided+=,io.netty,org.apache.httpcomponents,commons-codec
# Hadoop is pyspark's too, all but hadoop-aws and hadoop-azure (the S3A and ABFS filesystems
# the pom adds).
hadoop=hadoop-client-api,hadoop-client-runtime,hadoop-common,hadoop-annotations,hadoop-auth
mvn -q -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
  -DexcludeGroupIds="$provided" -DexcludeArtifactIds="$hadoop" -DoutputDirectory="$tmp" >&2
compgen -G "$tmp/delta-spark_*.jar" >/dev/null || { echo "setup_spark: Maven left no delta-spark jar in $tmp" >&2; exit 1; }
echo "$want" > "$tmp/.pom.sha256"
# Swap the folder in whole so that a reader never sees half of it.
rm -rf "$dir.old"
[[ -d "$dir" ]] && mv "$dir" "$dir.old"
mv "$tmp" "$dir"
rm -rf "$dir.old"
trap - EXIT
echo "$dir"

#!/usr/bin/env bash
# Fetches the Delta Lake (and S3A and ABFS) jars that a local PySpark needs (scripts/spark-jars/pom.xml) from Maven
# into a cache folder, once (scripts/fetch_jars.sh). Jars that the pyspark wheel already ships
# (Hadoop, Parquet, Jackson, logging, compression codecs) are left out so that Spark's own
# versions are the only ones on the class path.
#
# The folder is $MSSQL_CDC_SPARK_JARS, by default ~/.cache/mssql-cdc/spark-jars; the tests
# (tests/delta/conftest.py) look in the same place. Prints the folder on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${MSSQL_CDC_SPARK_JARS:-${XDG_CACHE_HOME:-$HOME/.cache}/mssql-cdc/spark-jars}
provided=org.scala-lang,org.apache.parquet,com.fasterxml.jackson.core
provided+=,org.apache.logging.log4j,org.slf4j,org.xerial.snappy,com.github.luben,io.airlift
provided+=,org.roaringbitmap,commons-logging,commons-pool,com.google.code.findbugs,org.locationtech.jts
provided+=,io.netty,org.apache.httpcomponents,commons-codec
# Hadoop is pyspark's too, all but hadoop-aws and hadoop-azure (the S3A and ABFS filesystems
# the pom adds).
hadoop=hadoop-client-api,hadoop-client-runtime,hadoop-common,hadoop-annotations,hadoop-auth
exec "$root/scripts/fetch_jars.sh" setup_spark "$root/scripts/spark-jars/pom.xml" "$dir" 'delta-spark_*.jar' \
  -DexcludeGroupIds="$provided" -DexcludeArtifactIds="$hadoop"

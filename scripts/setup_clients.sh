#!/usr/bin/env bash
# Fetches the Java SQL Server clients the tests point at `sim serve` (scripts/client-jars/pom.xml:
# Microsoft's JDBC driver, Debezium's SQL Server connector) from Maven into a cache folder,
# once (scripts/fetch_jars.sh).
#
# The folder is $MSSQL_CDC_CLIENT_JARS, by default ~/.cache/mssql-cdc/client-jars; the tests
# (tests/clients) look in the same place. Prints the folder on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${MSSQL_CDC_CLIENT_JARS:-${XDG_CACHE_HOME:-$HOME/.cache}/mssql-cdc/client-jars}
exec "$root/scripts/fetch_jars.sh" setup_clients "$root/scripts/client-jars/pom.xml" "$dir" 'mssql-jdbc-*.jar'

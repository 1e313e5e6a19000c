#!/usr/bin/env bash
# Installs what the demo needs (`scripts/setup.sh demo`) or what the build, the tests and the
# benchmarks need (`scripts/setup.sh`, everything), on Debian 12, as root.
#
# The demo needs only the compiler, the engine's libraries and pyarrow (whose Arrow C++ the
# engine links); a JDK, Maven, the Delta jars, the storage emulators, GoogleTest and the test
# suites' Python packages are the tests'. Idempotent: a second run checks and returns in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
case $mode in
  demo|all) ;;
  *) echo "usage: scripts/setup.sh [demo|all]" >&2; exit 2 ;;
esac

DEMO_PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache
  python3 python3-venv python3-dev
  libsqlite3-dev unixodbc-dev libssl-dev
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libasio-dev
  tzdata
)
TEST_PACKAGES=(
  git sqlite3 unixodbc tdsodbc openssl
  libgtest-dev libgmock-dev libbenchmark-dev
  openjdk-17-jdk-headless maven
  chromium
)
packages=("${DEMO_PACKAGES[@]}")
[[ $mode == all ]] && packages+=("${TEST_PACKAGES[@]}")

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # dpkg's progress is shown only when the install fails.
  log=$(mktemp)
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } > "$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "setup: installing Debian packages failed" >&2
    exit 1
  fi
  rm -f "$log"
fi

# Installs a requirements file into .venv unless the stamp says it is there already.
install_requirements() {
  local file=$1 stamp=.venv/.$(basename "$1" .txt).sha256 want
  want=$(cat scripts/requirements-demo.txt "$file" | sha256sum | cut -d' ' -f1)
  [[ -x .venv/bin/python && -f $stamp && "$(cat "$stamp")" == "$want" ]] && return 0
  echo "setup: installing $file into .venv"
  if [[ ! -x .venv/bin/python ]]; then
    "${PYTHON:-python3}" -m venv .venv
    scripts/pip_install.sh .venv/bin/python -q --upgrade pip
  fi
  scripts/pip_install.sh .venv/bin/python -q -r "$file"
  # The wheel ships libarrow.so.<abi>; the linker wants the unversioned names too.
  .venv/bin/python -c "import pyarrow; pyarrow.create_library_symlinks()"
  echo "$want" > "$stamp"
}

if [[ $mode == demo ]]; then
  install_requirements scripts/requirements-demo.txt
  exit 0
fi

# fake-gcs-server, the GCS emulator of the object-store tests (cached; fast when present),
# builds while the downloads below wait on the network.
scripts/setup_fake_gcs.sh >/dev/null &
fake_gcs=$!

install_requirements scripts/requirements.txt

# The Delta Lake jars for the local Spark of the interop tests (cached; fast when present).
scripts/setup_spark.sh >/dev/null

# Microsoft's JDBC driver and Debezium's SQL Server connector, the Java clients the tests point
# at sim serve (cached; fast when present).
scripts/setup_clients.sh >/dev/null

# The reference library 0.8.0 in a venv of its own, whose public API the tests compare with ours
# (cached; fast when present).
scripts/setup_reference.sh >/dev/null

# Azurite, the Azure Storage emulator of the object-store tests (cached; fast when present).
scripts/setup_azurite.sh >/dev/null

# fake-gcs-server must have finished building.
wait "$fake_gcs" || { echo "setup: building fake-gcs-server failed (scripts/setup_fake_gcs.sh)" >&2; exit 1; }

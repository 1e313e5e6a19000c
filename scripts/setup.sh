#!/usr/bin/env bash
# Installs everything the build, the tests and the demo need, on Debian 12, as root.
# Idempotent: a second run checks and returns in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git
  python3 python3-venv python3-dev
  libsqlite3-dev sqlite3
  unixodbc unixodbc-dev tdsodbc libssl-dev openssl
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libasio-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  tzdata
  openjdk-17-jdk-headless maven
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# fake-gcs-server, the GCS emulator of the object-store tests (cached; fast when present),
# builds while the downloads below wait on the network.
scripts/setup_fake_gcs.sh >/dev/null &
fake_gcs=$!

PYTHON=${PYTHON:-python3}
stamp=.venv/.requirements.sha256
want=$(sha256sum scripts/requirements.txt | cut -d' ' -f1)
if [[ ! -x .venv/bin/python || ! -f $stamp || "$(cat $stamp)" != "$want" ]]; then
  echo "setup: creating .venv with scripts/requirements.txt"
  [[ -x .venv/bin/python ]] || "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r scripts/requirements.txt
  # The wheel ships libarrow.so.<abi>; the linker wants the unversioned names too.
  .venv/bin/python -c "import pyarrow; pyarrow.create_library_symlinks()"
  echo "$want" > "$stamp"
fi

# The Delta Lake jars for the local Spark of the interop tests (cached; fast when present).
scripts/setup_spark.sh >/dev/null

# Azurite, the Azure Storage emulator of the object-store tests (cached; fast when present).
scripts/setup_azurite.sh >/dev/null

# fake-gcs-server must have finished building.
wait "$fake_gcs" || { echo "setup: building fake-gcs-server failed (scripts/setup_fake_gcs.sh)" >&2; exit 1; }

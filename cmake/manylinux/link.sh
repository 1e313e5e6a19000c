#!/usr/bin/env bash
# Links the extension against glibc 2.28 (manylinux_2_28) with zig's linker, which carries
# stub libraries of every glibc version: the objects come from the system's g++, libstdc++ is
# linked in statically, libgcc_s stays the system's (the policy allows it).
# Usage, as cmake/ManylinuxWheel.cmake calls it: link.sh PYTHON LIBSTDCXX_A LIBGCC_S -- the
# link arguments g++ would get.
set -euo pipefail
python=$1 libstdcxx=$2 libgcc_s=$3
shift 4
args=()
for arg in "$@"; do
  case "$arg" in
    -fno-fat-lto-objects|-flto*|-fuse-linker-plugin|-static-libstdc++|-static-libgcc) ;;  # g++ only
    *) args+=("$arg") ;;
  esac
done
# Python's own symbols stay undefined in an extension (the interpreter has them), so the
# link cannot refuse undefined symbols; scripts/build_wheel.sh checks afterwards that every
# other undefined symbol is bound to a glibc version.
exec "$python" -m ziglang cc -target x86_64-linux-gnu.2.28 "${args[@]}" \
  "$libstdcxx" "$libgcc_s" -lm -ldl -lpthread -lrt

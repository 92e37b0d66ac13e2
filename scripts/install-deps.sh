#!/bin/sh
# Installs tk's build and test dependencies from Debian's packages (Debian 12).
# Fast when everything is already there: only missing packages are installed.
set -eu
PACKAGES="cmake ninja-build ccache g++ llvm-19-dev llvm-19-tools libzstd-dev re2c bison \
libcli11-dev libgtest-dev libboost-context-dev nlohmann-json3-dev clang-19 libclang-rt-19-dev python3 hyperfine \
libmimalloc-dev libdlpack-dev"
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "install-deps: installing$missing"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

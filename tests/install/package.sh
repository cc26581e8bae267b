#!/usr/bin/env bash
# Builds the Debian package of the build directory BUILD with `cpack -G DEB`, installs it and
# builds a consumer against it (consume.sh). The package is installed with `dpkg -i` only when
# running as root with CI=true and no package named exactly is installed already, and is then
# removed with `dpkg -r` at the end, whatever happens; otherwise it is extracted with
# `dpkg-deb -x` into a temporary root, and the output says so.
# Usage: package.sh BUILD WORKDIR CXX "CXXFLAGS"
set -euo pipefail
build=$1 work=$2 cxx=$3 cxxflags=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"

(cd "$build" && cpack -G DEB -B "$work/package" >"$work/cpack.log") || {
  cat "$work/cpack.log"
  exit 1
}
deb=$(find "$work/package" -maxdepth 1 -name 'exactly_*.deb' | head -n 1)
[ -n "$deb" ] || { echo "cpack made no exactly_*.deb"; exit 1; }
echo "package: $(basename "$deb")"
dpkg-deb -f "$deb" Package Version Maintainer Depends
contents=$(dpkg-deb -c "$deb")
for f in bin/fault-proxy bin/exactly-conformance bin/exactly-admin pkgconfig/exactly.pc \
  cmake/exactly/exactlyConfig.cmake; do
  grep -q -- "/$f\$" <<<"$contents" || { echo "the package lacks $f"; exit 1; }
  echo "  contains $f"
done

if [ "$(id -u)" -eq 0 ] && [ "${CI:-}" = true ] &&
  ! dpkg-query -W -f='${Status}' exactly 2>/dev/null | grep -q "install ok installed"; then
  echo "installing with dpkg -i (root, CI=true); removed with dpkg -r at the end"
  trap 'dpkg -r exactly >/dev/null' EXIT
  dpkg -i "$deb" >/dev/null
  prefix=/usr
else
  echo "not installing system-wide (needs root and CI=true, and no exactly package installed):" \
    "extracting with dpkg-deb -x into $work/root"
  dpkg-deb -x "$deb" "$work/root"
  prefix=$work/root/usr
fi
bash "$here/consume.sh" "$prefix" "$work/consumer" "$cxx" "$cxxflags"

#!/usr/bin/env bash
# Builds kcc's Debian package (cpack -G DEB), unpacks it with dpkg-deb -x,
# runs the unpacked kcc and builds and runs the AOT example against the
# unpacked files, and checks that the package's Depends name the Debian
# package of every shared library its binaries load.
#
#   debian-package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD="$1"
SRC="$2"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# Package, configure and build quietly; show the log when a step fails.
quiet() { "$@" >"$TMP/log" 2>&1 || { cat "$TMP/log"; return 1; }; }
(cd "$BUILD" && quiet cpack -G DEB -B "$TMP/pkg")
DEB="$(ls "$TMP"/pkg/kcc_*_amd64.deb)"
echo "built $(basename "$DEB") ($(du -h "$DEB" | cut -f1))"
dpkg-deb -x "$DEB" "$TMP/root"

"$TMP/root/usr/bin/kcc" --version
quiet cmake -G Ninja -S "$SRC/examples/aot" -B "$TMP/aot" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$TMP/root/usr"
quiet cmake --build "$TMP/aot" -j 2
"$TMP/aot/train_aot" 100

# Depends against what the binaries link: each library a binary names
# (DT_NEEDED; the packages of those bring their own dependencies), found
# where the loader finds it.
DEPENDS="$(dpkg-deb -f "$DEB" Depends)"
echo "Depends: $DEPENDS"
missing=0
for bin in "$TMP/root/usr/bin/kcc" "$TMP/root/usr/bin/kcc-opt"; do
  for needed in $(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}'); do
    ldd "$bin" | awk -v n="$needed" '$1 == n && $3 ~ /^\// {print $3}'
  done
done | sort -u > "$TMP/needed"
test -s "$TMP/needed"
# The package names alone, one per line ("libc6 (>= 2.34)" -> "libc6").
tr ',' '\n' <<<"$DEPENDS" | sed 's/(.*//; s/[[:space:]]//g' > "$TMP/depends"
for lib in $(cat "$TMP/needed"); do
  # The package of the file itself (a symlink may belong to a -dev package).
  owner="$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || true)"
  pkg="${owner%%:*}"
  if [ -z "$pkg" ]; then
    echo "error: no Debian package owns $lib" >&2
    missing=1
  elif ! grep -qxF "$pkg" "$TMP/depends"; then
    echo "error: $lib comes from $pkg, which Depends does not name" >&2
    missing=1
  fi
done
[ "$missing" -eq 0 ]

# The Python package from the package's files (when it was built): pip
# installs /usr/share/kcc/python, module included, into a fresh venv (its
# dependencies from the cache python-tests.sh filled, or PyPI).
PY="$TMP/root/usr/share/kcc/python"
if [ -d "$PY" ]; then
  ls "$PY"/kcc/_kcc*.so >/dev/null
  python3 -m venv "$TMP/venv"
  alone=(env -u KCC_BUILD_DIR -u KCC_PYTHON_MODULE_DIR)
  quiet "${alone[@]}" "$TMP/venv/bin/pip" install \
    --disable-pip-version-check "$PY"
  (cd "$TMP" && "${alone[@]}" "$TMP/venv/bin/python" -c \
    "import kcc; print('kcc', kcc.__version__)")
fi
echo "debian package: ok"

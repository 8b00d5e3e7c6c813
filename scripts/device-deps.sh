# Sourced by the GPU-machine scripts (scripts/gpu-*.sh): unpacks the Debian packages carried in
# .device/ (toml++, and libdw1/libelf1 for nsys; docs/gpu-machine.md) into /tmp/deps, never into
# /, and points pkg-config, CMake (DEPS_PREFIX) and the loader at them.
mkdir -p /tmp/deps
for f in .device/*.deb; do dpkg -x "$f" /tmp/deps; done
export PKG_CONFIG_SYSROOT_DIR=/tmp/deps \
  PKG_CONFIG_LIBDIR=/tmp/deps/usr/lib/x86_64-linux-gnu/pkgconfig:/tmp/deps/usr/share/pkgconfig \
  LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu
DEPS_PREFIX=/tmp/deps/usr

# Sourced by the GPU-machine scripts (scripts/gpu-*.sh): unpacks the Debian packages carried in
# .device/ (toml++; libdw1/libelf1 for nsys; gRPC, protobuf and SQLite for cuzkd;
# docs/gpu-machine.md) into /tmp/deps, never into /, and points pkg-config, CMake (DEPS_PREFIX),
# the loader and the PATH (protoc, grpc_cpp_plugin; pkg-config where the machine has none) at them.
mkdir -p /tmp/deps
for f in .device/*.deb; do dpkg -x "$f" /tmp/deps; done
export PKG_CONFIG_SYSROOT_DIR=/tmp/deps \
  PKG_CONFIG_LIBDIR=/tmp/deps/usr/lib/x86_64-linux-gnu/pkgconfig:/tmp/deps/usr/share/pkgconfig \
  LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu \
  PATH=$PATH:/tmp/deps/usr/bin
DEPS_PREFIX=/tmp/deps/usr

# Sourced by the GPU-machine scripts (scripts/gpu-*.sh) and by run scripts that carry binaries
# built on the development VM (docs/gpu-machine.md): unpacks the Debian packages carried in
# ${CUZK_DEVICE_DEBS:-.device}/ (toml++; libdw1/libelf1 for nsys; gRPC, protobuf and SQLite for
# cuzkd; the runtime libraries of carried binaries) into /tmp/deps, never into /, and points
# pkg-config, CMake (DEPS_PREFIX), the loader and the PATH (protoc, grpc_cpp_plugin; pkg-config
# where the machine has none) at them. The machine's own CUPTI is linked in beside them: binaries
# built elsewhere need libcupti.so.13, which sits outside the loader's path there.
mkdir -p /tmp/deps/usr/lib/x86_64-linux-gnu
for f in "${CUZK_DEVICE_DEBS:-.device}"/*.deb; do [ -e "$f" ] && dpkg -x "$f" /tmp/deps; done
if [ ! -e /tmp/deps/usr/lib/x86_64-linux-gnu/libcupti.so.13 ]; then
  cupti=$(find /usr/local/cuda/ /usr/local/cuda-13*/ -name 'libcupti.so.13*' 2>/dev/null | head -1)
  [ -n "$cupti" ] && ln -sf "$(readlink -f "$cupti")" /tmp/deps/usr/lib/x86_64-linux-gnu/libcupti.so.13
fi
export PKG_CONFIG_SYSROOT_DIR=/tmp/deps \
  PKG_CONFIG_LIBDIR=/tmp/deps/usr/lib/x86_64-linux-gnu/pkgconfig:/tmp/deps/usr/share/pkgconfig \
  LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu \
  PATH=$PATH:/tmp/deps/usr/bin
DEPS_PREFIX=/tmp/deps/usr

# Cross-building the runtime and the RPC server for 64-bit Arm Linux (a board):
#
#   cmake -S . -B build-aarch64 -G Ninja -DANVIL_RUNTIME_ONLY=ON \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#
# The compilers are Debian's g++-aarch64-linux-gnu. The libraries the RPC server links come from
# Debian's arm64 runtime packages (dpkg --add-architecture arm64; apt-get install libzmq5:arm64
# libsodium23:arm64 zlib1g:arm64; scripts/install_deps.sh --tests does both), linked by their
# full names since the arm64 -dev packages (which would pull in dozens more) are not installed:
# the headers are the build machine's, which are the same for both architectures.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(arm64_libs /usr/lib/aarch64-linux-gnu)
set(ZMQ_LIBRARY ${arm64_libs}/libzmq.so.5 CACHE FILEPATH "libzmq for arm64")
set(SODIUM_LIBRARY ${arm64_libs}/libsodium.so.23 CACHE FILEPATH "libsodium for arm64")
set(ZLIB_LIBRARY ${arm64_libs}/libz.so.1 CACHE FILEPATH "zlib for arm64")
set(ZLIB_INCLUDE_DIR /usr/include CACHE PATH "zlib's headers")
# libzmq's own dependencies (libstdc++, libgssapi, ...) are found at link time in the same place.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${arm64_libs}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${arm64_libs}")

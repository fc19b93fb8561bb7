// For tests that run AArch64 code under qemu-aarch64: the C source every test driver starts with
// (the DLPack and packed-call types, and serial stand-ins for the runtime functions kernels call,
// since no libanvil_runtime.so is built for AArch64), and whether a tool is installed.
#pragma once

#include <cstdlib>
#include <string>

namespace anvil::testing {

inline constexpr const char* kAArch64DriverStubs = R"(
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
typedef union { int64_t v_int64; double v_float64; void* v_handle; const char* v_str; } AnvilValue;
typedef struct { int32_t device_type, device_id; } DLDevice;
typedef struct { uint8_t code, bits; uint16_t lanes; } DLDataType;
typedef struct {
    void* data; DLDevice device; int32_t ndim; DLDataType dtype;
    int64_t* shape; int64_t* strides; uint64_t byte_offset;
} DLTensor;
typedef int (*Kernel)(const AnvilValue*, const int*, int, AnvilValue*, int*, void*);
static char last_error[1024];
void anvil_set_last_error(const char* m) { snprintf(last_error, sizeof last_error, "%s", m); }
typedef int (*Lambda)(int, int, void*);
int anvil_parallel_launch(Lambda f, void* closure, int n) {
    if (n <= 0) n = 3; /* uneven chunks on purpose */
    for (int t = 0; t < n; ++t) {
        int r = f(t, n, closure);
        if (r != 0) return r;
    }
    return 0;
}
int anvil_num_threads(void) { return 1; }
void* anvil_workspace_alloc(int64_t n) { return aligned_alloc(64, (size_t)((n + 63) / 64 * 64)); }
void anvil_workspace_free(void* p) { free(p); }
)";

inline bool have_tool(const std::string& name) {
    return std::system(("command -v " + name + " > /dev/null 2>&1").c_str()) == 0;
}

}  // namespace anvil::testing

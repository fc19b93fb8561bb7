// anvil_request_amx: the permission Linux asks of a process before its first AMX tile
// instruction. AMX's tile data is an XSAVE state component (XTILEDATA, 8 KiB per thread) that
// Linux enables only on request (arch_prctl ARCH_REQ_XCOMP_PERM, Linux 5.16 on); without it the
// first tile instruction raises SIGILL. Kernels with AMX tile products (tir's tensorize_amx)
// call this before configuring their tiles: the first call asks, later ones return its answer.
#include <cerrno>
#include <cstring>
#include <string>

#include "anvil/runtime.h"

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace {

// Linux's arch_prctl codes (asm/prctl.h) and the tile data component (XFEATURE_XTILEDATA).
constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureXtiledata = 18;

// Empty when granted, else why not.
std::string ask() {
#if defined(__linux__) && defined(__x86_64__)
    if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0) return "";
    return std::string("arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) failed: ") +
           std::strerror(errno);
#else
    return "AMX tiles need Linux on x86-64";
#endif
}

}  // namespace

extern "C" int anvil_request_amx(void) {
    // Thread-safe once (a static's initialization); the answer does not change.
    static const std::string refusal = ask();
    if (refusal.empty()) return 0;
    anvil_set_last_error(("this kernel uses AMX tile instructions, which the operating system "
                          "does not allow this process: " +
                          refusal + " (compile for a target without amx-tile: -mattr=-amx-tile)")
                             .c_str());
    return -1;
}

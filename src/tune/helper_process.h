// What the tuner's helper programs (anvil-build, anvil-measure) set up first, header-only so that
// anvil-measure keeps linking the runtime alone.
#pragma once

#include <sys/prctl.h>
#include <sys/resource.h>

#include <csignal>

namespace anvil::tune {

// A helper outlives nothing: when the tuning session dies, so does the helper. A crash (a
// candidate kernel's, or the compiler's on a generated program) is an expected outcome of
// tuning, not worth a core file each.
inline void become_tuning_helper() {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
}

}  // namespace anvil::tune

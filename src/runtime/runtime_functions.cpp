// The runtime's own registry functions, for every caller of the registry (C, C++, Python, the
// VM's call_packed): the thread pool's size.
//
//   runtime.num_threads()          the pool's thread count
//   runtime.default_num_threads()  what it is by default (ANVIL_NUM_THREADS, else the cores)
//   runtime.set_num_threads(n)     resizes the pool (0: the default); returns the new count
#include "runtime/packed_func.h"
#include "runtime/registry.h"
#include "runtime/thread_pool.h"
#include "support/error.h"

namespace anvil::runtime {

namespace {

// Registered when the library loads.
const bool kRegistered = [] {
    register_global_func("runtime.num_threads", PackedFunc([](const Args&, RetValue* ret) {
                             *ret = static_cast<int64_t>(num_threads());
                         }),
                         true);
    register_global_func("runtime.default_num_threads", PackedFunc([](const Args&, RetValue* ret) {
                             *ret = static_cast<int64_t>(default_num_threads());
                         }),
                         true);
    register_global_func("runtime.set_num_threads", PackedFunc([](const Args& args, RetValue* ret) {
                             int64_t n = args[0].as_int();
                             if (n < 0 || n > 4096) {
                                 user_error() << "runtime.set_num_threads: " << n
                                              << " is not a thread count (0 = the default)";
                             }
                             set_num_threads(static_cast<int>(n));
                             *ret = static_cast<int64_t>(num_threads());
                         }),
                         true);
    return true;
}();

}  // namespace

}  // namespace anvil::runtime

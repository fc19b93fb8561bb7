// C++ access to the runtime's thread pool (anvil_parallel_launch in anvil/runtime.h).
//
// The pool is persistent: ANVIL_NUM_THREADS threads (default: the cores this process may run on),
// the launching thread being worker 0. A launch allocates nothing and wakes spinning or sleeping
// workers; tasks are claimed dynamically, so task ids are not tied to threads. Launches from
// inside a task, and launches while another thread's launch holds the pool, run serially on the
// calling thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <type_traits>

#include "anvil/runtime.h"
#include "runtime/last_error.h"
#include "support/error.h"

namespace anvil::runtime {

// The number of threads the pool has (or will have when first used).
int num_threads();
// Resizes the pool (0 = the default); throws UserError inside a parallel task or for n < 0.
void set_num_threads(int num_threads);
// ANVIL_NUM_THREADS if set and valid, else the number of cores available to this process.
int default_num_threads();
// True on pool worker threads and on a thread that is running a launch's tasks.
bool in_parallel_region();
// Idle workers still spinning after the last launch sleep now instead: for work about to run on
// threads of its own (an external library's OpenMP team), which would otherwise share the cores
// with them. No-op inside a task and while another thread's launch holds the pool.
void park_idle_workers();

namespace detail {

template <typename F>
struct LaunchClosure {
    F* fn;
    std::atomic<bool> failed{false};
    std::exception_ptr error;  // written once, by the task that set `failed`
};

template <typename F>
int run_launch_task(int task_id, int num_tasks, void* data) {
    auto* closure = static_cast<LaunchClosure<F>*>(data);
    try {
        (*closure->fn)(task_id, num_tasks);
        return 0;
    } catch (...) {
        set_last_error_from_current_exception();
        if (!closure->failed.exchange(true)) closure->error = std::current_exception();
        return -1;
    }
}

}  // namespace detail

// Calls fn(task_id, num_tasks) for every task_id in [0, num_tasks) on the pool (num_tasks <= 0:
// one task per thread) and rethrows the first exception a task threw.
template <typename F>
void parallel_launch(int num_tasks, F&& fn) {
    using Fn = std::remove_reference_t<F>;
    detail::LaunchClosure<Fn> closure{&fn};
    if (anvil_parallel_launch(&detail::run_launch_task<Fn>, &closure, num_tasks) != 0) {
        if (closure.error) std::rethrow_exception(closure.error);
        throw UserError(anvil_get_last_error());
    }
}

// Calls fn(i) for every i in [begin, end), split into one contiguous chunk per thread.
template <typename F>
void parallel_for(int64_t begin, int64_t end, F&& fn) {
    if (end <= begin) return;
    const int64_t count = end - begin;
    const int tasks = static_cast<int>(std::min<int64_t>(num_threads(), count));
    const int64_t chunk = (count + tasks - 1) / tasks;
    parallel_launch(tasks, [&](int task_id, int) {
        const int64_t lo = begin + task_id * chunk;
        const int64_t hi = std::min(end, lo + chunk);
        for (int64_t i = lo; i < hi; ++i) fn(i);
    });
}

}  // namespace anvil::runtime

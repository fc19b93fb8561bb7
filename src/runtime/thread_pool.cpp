// The runtime's persistent thread pool.
//
// One launch at a time owns the pool. A launch publishes its job (lambda, closure, task count) and
// bumps `generation_`; workers spin on it for a moment, then sleep on it with a futex. Tasks are
// claimed from `claim_`, a 64-bit word holding the launch's generation and which tasks are taken
// (see kMaxOwnedTasks: thread k takes task k first), so that a worker that woke late for an old
// launch can never claim a task of a newer one: its
// compare-exchange expects the old generation. While a claimed task is unfinished the launch
// cannot end, so the job fields it reads after claiming are that launch's.
#include "runtime/thread_pool.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace anvil::runtime {
namespace {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "futex words must be plain 32-bit integers");

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr,
            nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
            nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// Long enough to bridge the host's work between back-to-back kernel launches, short enough that
// idle workers do not burn a core for long.
constexpr std::chrono::microseconds kSpinTime{100};

thread_local bool t_in_parallel_region = false;

int available_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
        return CPU_COUNT(&set);
    }
    unsigned cores = std::thread::hardware_concurrency();
    return cores > 0 ? static_cast<int>(cores) : 1;
}

// Spins until done() or kSpinTime has passed; returns done().
template <typename Done>
bool spin_until(Done done) {
    const auto start = std::chrono::steady_clock::now();
    for (unsigned i = 1;; ++i) {
        if (done()) return true;
        cpu_relax();
        if ((i & 255) == 0 && std::chrono::steady_clock::now() - start > kSpinTime) return done();
    }
}

// Runs one task; on failure the calling thread's last error is set and non-empty.
int call_task(AnvilParallelLambda lambda, void* closure, int task, int num_tasks) noexcept {
    clear_last_error();  // so that a failure without a message is not blamed on an old error
    int status = 0;
    try {
        status = lambda(task, num_tasks, closure);
    } catch (...) {
        set_last_error_from_current_exception();
        status = -1;
    }
    if (status != 0 && last_error_empty()) {
        char message[96];
        std::snprintf(message, sizeof(message),
                      "parallel task %d of %d failed (returned %d) without an error message", task,
                      num_tasks, status);
        set_last_error(message);
    }
    return status;
}

int run_serially(AnvilParallelLambda lambda, void* closure, int num_tasks) {
    const bool outer = t_in_parallel_region;
    t_in_parallel_region = true;
    int status = 0;
    for (int task = 0; task < num_tasks && status == 0; ++task) {
        status = call_task(lambda, closure, task, num_tasks);
    }
    t_in_parallel_region = outer;
    return status == 0 ? 0 : -1;
}

class ThreadPool {
public:
    explicit ThreadPool(int num_threads)
        : num_threads_(num_threads), spin_(num_threads <= available_cores()) {
        workers_.reserve(num_threads - 1);
        try {
            for (int id = 1; id < num_threads; ++id) {
                workers_.emplace_back([this, id] { worker_main(id); });
            }
        } catch (...) {
            stop_workers();
            throw;
        }
    }
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;
    ~ThreadPool() { stop_workers(); }

    int num_threads() const { return num_threads_; }

    // Spinning idle workers go to sleep now (park_idle_workers).
    void park() { park_epoch_.fetch_add(1, std::memory_order_relaxed); }

    // Runs every task on the pool and the calling thread; the caller holds the launch mutex.
    int launch(AnvilParallelLambda lambda, void* closure, int num_tasks) {
        const uint32_t gen = generation_.load(std::memory_order_relaxed) + 1;
        lambda_.store(lambda, std::memory_order_relaxed);
        closure_.store(closure, std::memory_order_relaxed);
        num_tasks_.store(num_tasks, std::memory_order_release);  // pairs with run_tasks
        completed_.store(0, std::memory_order_relaxed);
        failed_.store(false, std::memory_order_relaxed);
        claim_.store(claim_word(gen, 0), std::memory_order_release);
        generation_.store(gen, std::memory_order_seq_cst);
        if (sleeping_workers_.load(std::memory_order_seq_cst) != 0) futex_wake_all(&generation_);

        t_in_parallel_region = true;
        run_tasks(gen, 0);
        wait_for_completion(static_cast<uint32_t>(num_tasks));
        t_in_parallel_region = false;
        // Workers that woke late see the launch closed before the next one rewrites the job.
        claim_.store(claim_word(gen, kClosed), std::memory_order_release);

        if (!failed_.load(std::memory_order_acquire)) return 0;
        std::lock_guard<std::mutex> lock(error_mutex_);
        set_last_error(error_);
        error_.clear();
        return -1;
    }

private:
    // The low half of the claim word: with up to kMaxOwnedTasks tasks, a mask of the claimed
    // ones, and each thread claims the task of its own index first (thread k runs task k when
    // it is there in time), then any unclaimed one. Consecutive kernels split their loops into
    // the same chunks, so a thread then reads the data it wrote itself, from its own core's
    // cache: with first-come claiming, half of a memory-bound kernel's reads crossed to the other
    // core's cache at two threads. With more tasks, a count of the claimed ones, claimed in
    // order. kClosed (all ones) means no task left in either form.
    static constexpr uint32_t kClosed = 0xffffffffu;
    static constexpr uint32_t kNone = 0xffffffffu;
    static constexpr uint32_t kMaxOwnedTasks = 32;
    static uint64_t claim_word(uint32_t gen, uint32_t low) {
        return (static_cast<uint64_t>(gen) << 32) | low;
    }

    void worker_main(int id) {
        char name[16];
        std::snprintf(name, sizeof(name), "anvil-worker-%d", id);
        pthread_setname_np(pthread_self(), name);
        t_in_parallel_region = true;  // launches from inside tasks run serially
        uint32_t seen = 0;
        while (true) {
            seen = wait_for_generation(seen);
            if (stop_.load(std::memory_order_acquire)) return;
            run_tasks(seen, static_cast<uint32_t>(id));
        }
    }

    uint32_t wait_for_generation(uint32_t seen) {
        uint32_t gen = seen;
        auto changed = [&] {
            gen = generation_.load(std::memory_order_acquire);
            return gen != seen;
        };
        // park() ends the spin early.
        const uint32_t parked = park_epoch_.load(std::memory_order_relaxed);
        auto changed_or_parked = [&] {
            return changed() || park_epoch_.load(std::memory_order_relaxed) != parked;
        };
        if (spin_ && spin_until(changed_or_parked) && gen != seen) return gen;
        // The launcher bumps generation_ and then reads sleeping_workers_; we count ourselves and
        // then re-read generation_ (all seq_cst), so one of us sees the other: no lost wake-up.
        while (!changed()) {
            sleeping_workers_.fetch_add(1, std::memory_order_seq_cst);
            if (generation_.load(std::memory_order_seq_cst) == seen) futex_wait(&generation_, seen);
            sleeping_workers_.fetch_sub(1, std::memory_order_relaxed);
        }
        return gen;
    }

    // The task thread `me` (0: the launching thread) claims next in a claim word, or kNone.
    static uint32_t next_task(uint64_t word, uint32_t num_tasks, uint32_t me) {
        const auto low = static_cast<uint32_t>(word);
        if (num_tasks > kMaxOwnedTasks) return low < num_tasks ? low : kNone;
        const uint32_t all = num_tasks == 32 ? 0xffffffffu : (1u << num_tasks) - 1;
        const uint32_t unclaimed = ~low & all;
        if (unclaimed == 0) return kNone;
        if (me < num_tasks && ((unclaimed >> me) & 1u)) return me;
        return static_cast<uint32_t>(__builtin_ctz(unclaimed));
    }

    static uint64_t with_claimed(uint64_t word, uint32_t task, uint32_t num_tasks) {
        return num_tasks > kMaxOwnedTasks ? word + 1 : word | (uint64_t{1} << task);
    }

    void run_tasks(uint32_t gen, uint32_t me) {
        // If this reads a later launch's count, then launch `gen` has been closed (the close
        // happens before the next launch's release store), so the claim below fails.
        const auto num_tasks = static_cast<uint32_t>(num_tasks_.load(std::memory_order_acquire));
        uint64_t word = claim_.load(std::memory_order_acquire);
        while (true) {
            if (static_cast<uint32_t>(word >> 32) != gen) return;
            const uint32_t task = next_task(word, num_tasks, me);
            if (task == kNone) return;
            if (!claim_.compare_exchange_weak(word, with_claimed(word, task, num_tasks),
                                              std::memory_order_acq_rel,
                                              std::memory_order_acquire)) {
                continue;
            }
            if (!failed_.load(std::memory_order_relaxed)) {
                run_task(lambda_.load(std::memory_order_relaxed),
                         closure_.load(std::memory_order_relaxed), static_cast<int>(task),
                         static_cast<int>(num_tasks));
            }
            if (completed_.fetch_add(1, std::memory_order_seq_cst) + 1 == num_tasks &&
                caller_sleeping_.load(std::memory_order_seq_cst) != 0) {
                futex_wake_all(&completed_);
            }
            word = claim_.load(std::memory_order_acquire);
        }
    }

    void run_task(AnvilParallelLambda lambda, void* closure, int task, int num_tasks) {
        if (call_task(lambda, closure, task, num_tasks) == 0) return;
        std::lock_guard<std::mutex> lock(error_mutex_);
        if (!failed_.load(std::memory_order_relaxed)) {
            try {
                error_ = anvil_get_last_error();
            } catch (...) {
                error_.clear();  // the caller then reports the failure without the message
            }
            failed_.store(true, std::memory_order_release);
        }
        clear_last_error();
    }

    void wait_for_completion(uint32_t num_tasks) {
        auto done = [&] { return completed_.load(std::memory_order_acquire) == num_tasks; };
        if (spin_ && spin_until(done)) return;
        // Same handshake as wait_for_generation, with the last finishing worker as the waker.
        while (true) {
            caller_sleeping_.store(1, std::memory_order_seq_cst);
            const uint32_t completed = completed_.load(std::memory_order_seq_cst);
            if (completed == num_tasks) break;
            futex_wait(&completed_, completed);
        }
        caller_sleeping_.store(0, std::memory_order_relaxed);
    }

    void stop_workers() {
        stop_.store(true, std::memory_order_release);
        generation_.fetch_add(1, std::memory_order_seq_cst);
        futex_wake_all(&generation_);
        for (std::thread& worker : workers_) worker.join();
        workers_.clear();
    }

    const int num_threads_;  // including the launching thread
    const bool spin_;        // false when oversubscribed: spinning would steal a worker's core
    std::vector<std::thread> workers_;

    alignas(64) std::atomic<uint32_t> generation_{0};
    std::atomic<uint32_t> sleeping_workers_{0};
    std::atomic<uint32_t> park_epoch_{0};  // bumped by park()
    std::atomic<bool> stop_{false};

    alignas(64) std::atomic<AnvilParallelLambda> lambda_{nullptr};
    std::atomic<void*> closure_{nullptr};
    std::atomic<int> num_tasks_{0};

    alignas(64) std::atomic<uint64_t> claim_{claim_word(0, kClosed)};
    alignas(64) std::atomic<uint32_t> completed_{0};
    std::atomic<uint32_t> caller_sleeping_{0};
    std::atomic<bool> failed_{false};
    std::mutex error_mutex_;
    std::string error_;  // the first failing task's message
};

// The pool belongs to whichever thread holds g_launch_mutex. It is created on first use and
// deliberately never destroyed at exit: its threads may still be parked in the kernel then.
std::mutex g_launch_mutex;
ThreadPool* g_pool = nullptr;
std::atomic<int> g_num_threads{0};  // 0 until first asked

int configured_num_threads() {
    int n = g_num_threads.load(std::memory_order_relaxed);
    if (n != 0) return n;
    int expected = 0;
    g_num_threads.compare_exchange_strong(expected, default_num_threads());
    return g_num_threads.load(std::memory_order_relaxed);
}

int launch(AnvilParallelLambda lambda, void* closure, int num_tasks) {
    if (lambda == nullptr) {
        set_last_error("anvil_parallel_launch: lambda is NULL");
        return -1;
    }
    if (t_in_parallel_region) {
        return run_serially(lambda, closure, num_tasks > 0 ? num_tasks : num_threads());
    }
    std::unique_lock<std::mutex> lock(g_launch_mutex, std::try_to_lock);
    const int threads = configured_num_threads();
    if (num_tasks <= 0) num_tasks = threads;
    // Another host thread owns the pool: running serially beats waiting for it.
    if (!lock.owns_lock() || threads == 1 || num_tasks == 1) {
        return run_serially(lambda, closure, num_tasks);
    }
    if (g_pool == nullptr) g_pool = new ThreadPool(threads);
    return g_pool->launch(lambda, closure, num_tasks);
}

}  // namespace

int default_num_threads() {
    if (const char* env = std::getenv("ANVIL_NUM_THREADS"); env != nullptr && *env != '\0') {
        char* end = nullptr;
        long value = std::strtol(env, &end, 10);
        if (*end == '\0' && value > 0 && value <= 4096) return static_cast<int>(value);
    }
    return available_cores();
}

int num_threads() {
    return configured_num_threads();
}

bool in_parallel_region() {
    return t_in_parallel_region;
}

void park_idle_workers() {
    // Inside a task the launching thread holds the mutex (try_lock by its owner is undefined).
    if (t_in_parallel_region) return;
    std::unique_lock<std::mutex> lock(g_launch_mutex, std::try_to_lock);
    if (lock.owns_lock() && g_pool != nullptr) g_pool->park();
}

void set_num_threads(int num_threads) {
    if (t_in_parallel_region) {
        user_error() << "anvil_set_num_threads cannot be called from inside a parallel task";
    }
    if (num_threads < 0 || num_threads > 4096) {
        user_error() << "anvil_set_num_threads: " << num_threads
                     << " threads requested; expected 0 (default) to 4096";
    }
    std::lock_guard<std::mutex> lock(g_launch_mutex);
    const int target = num_threads == 0 ? default_num_threads() : num_threads;
    g_num_threads.store(target, std::memory_order_relaxed);
    if (g_pool != nullptr && g_pool->num_threads() != target) {
        delete g_pool;
        g_pool = nullptr;
    }
}

}  // namespace anvil::runtime

extern "C" {

int anvil_parallel_launch(AnvilParallelLambda lambda, void* closure, int num_tasks) {
    return anvil::runtime::catch_to_status(
        [&] { return anvil::runtime::launch(lambda, closure, num_tasks); });
}

int anvil_num_threads(void) {
    return anvil::runtime::num_threads();
}

int anvil_set_num_threads(int num_threads) {
    return anvil::runtime::catch_to_status([&] {
        anvil::runtime::set_num_threads(num_threads);
        return 0;
    });
}

}  // extern "C"

#include "runtime/thread_pool.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/packed_func.h"
#include "runtime/registry.h"
#include "support/error.h"

namespace anvil::runtime {
namespace {

// Restores the pool size a test changed, so tests do not depend on their order.
class ThreadPoolTest : public ::testing::Test {
protected:
    void SetUp() override { saved_ = anvil_num_threads(); }
    void TearDown() override { anvil_set_num_threads(saved_); }

private:
    int saved_ = 0;
};

struct CountClosure {
    std::vector<std::atomic<int>>* runs;
};

int count_runs(int task_id, int num_tasks, void* data) {
    auto* closure = static_cast<CountClosure*>(data);
    (*closure->runs)[task_id].fetch_add(1);
    return 0;
}

TEST_F(ThreadPoolTest, EveryTaskRunsExactlyOnce) {
    for (int threads : {1, 2, 4}) {
        ASSERT_EQ(anvil_set_num_threads(threads), 0);
        EXPECT_EQ(anvil_num_threads(), threads);
        for (int num_tasks : {1, 2, 3, 7, 31, 32, 33, 64, 1000}) {
            std::vector<std::atomic<int>> runs(num_tasks);
            CountClosure closure{&runs};
            ASSERT_EQ(anvil_parallel_launch(&count_runs, &closure, num_tasks), 0);
            for (int i = 0; i < num_tasks; ++i) {
                ASSERT_EQ(runs[i].load(), 1)
                    << "task " << i << " of " << num_tasks << " with " << threads << " threads";
            }
        }
    }
}

TEST_F(ThreadPoolTest, NonPositiveTaskCountMeansOnePerThread) {
    ASSERT_EQ(anvil_set_num_threads(3), 0);
    for (int num_tasks : {0, -1}) {
        std::atomic<int> seen_num_tasks{0};
        std::atomic<int> count{0};
        parallel_launch(num_tasks, [&](int, int n) {
            seen_num_tasks = n;
            ++count;
        });
        EXPECT_EQ(count.load(), 3);
        EXPECT_EQ(seen_num_tasks.load(), 3);
    }
}

// All tasks wait at a barrier, which completes only if each runs on its own thread.
TEST_F(ThreadPoolTest, UsesAllThreadsConcurrently) {
    constexpr int kThreads = 4;
    ASSERT_EQ(anvil_set_num_threads(kThreads), 0);
    std::atomic<int> arrived{0};
    std::atomic<bool> timed_out{false};
    std::mutex mutex;
    std::set<std::thread::id> ids;
    parallel_launch(kThreads, [&](int, int) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            ids.insert(std::this_thread::get_id());
        }
        ++arrived;
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (arrived.load() < kThreads) {
            if (std::chrono::steady_clock::now() > deadline) {
                timed_out = true;
                return;
            }
            std::this_thread::yield();
        }
    });
    EXPECT_FALSE(timed_out.load());
    EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads));
    EXPECT_TRUE(ids.count(std::this_thread::get_id())) << "the caller is worker 0";
}

TEST_F(ThreadPoolTest, NumThreadsComesFromEnvironment) {
    const char* old = getenv("ANVIL_NUM_THREADS");
    std::string saved = old ? old : "";
    setenv("ANVIL_NUM_THREADS", "3", 1);
    EXPECT_EQ(default_num_threads(), 3);
    ASSERT_EQ(anvil_set_num_threads(0), 0);
    EXPECT_EQ(anvil_num_threads(), 3);
    std::atomic<int> count{0};
    parallel_launch(0, [&](int, int) { ++count; });
    EXPECT_EQ(count.load(), 3);
    setenv("ANVIL_NUM_THREADS", "not a number", 1);
    EXPECT_GE(default_num_threads(), 1);
    if (old)
        setenv("ANVIL_NUM_THREADS", saved.c_str(), 1);
    else
        unsetenv("ANVIL_NUM_THREADS");
}

TEST_F(ThreadPoolTest, NestedLaunchRunsSeriallyOnTheCallingThread) {
    ASSERT_EQ(anvil_set_num_threads(4), 0);
    constexpr int kOuter = 8, kInner = 16;
    std::vector<std::atomic<int>> runs(kOuter * kInner);
    std::atomic<bool> inner_moved{false};
    parallel_launch(kOuter, [&](int outer, int) {
        EXPECT_TRUE(in_parallel_region());
        const auto self = std::this_thread::get_id();
        parallel_launch(kInner, [&](int inner, int) {
            if (std::this_thread::get_id() != self) inner_moved = true;
            runs[outer * kInner + inner].fetch_add(1);
        });
        EXPECT_EQ(anvil_set_num_threads(2), -1);  // resizing from inside a task is refused
    });
    EXPECT_FALSE(in_parallel_region());
    EXPECT_FALSE(inner_moved.load());
    for (auto& r : runs) EXPECT_EQ(r.load(), 1);
    EXPECT_EQ(anvil_num_threads(), 4);
}

int fail_on_task_5(int task_id, int, void*) {
    if (task_id == 5) {
        anvil_set_last_error("task 5 failed: bad input");
        return -1;
    }
    return 0;
}

int fail_silently(int task_id, int, void*) {
    return task_id == 2 ? 7 : 0;
}

TEST_F(ThreadPoolTest, TaskErrorReachesTheCaller) {
    for (int threads : {1, 4}) {
        ASSERT_EQ(anvil_set_num_threads(threads), 0);
        for (int attempt = 0; attempt < 20; ++attempt) {
            anvil_set_last_error("");
            ASSERT_EQ(anvil_parallel_launch(&fail_on_task_5, nullptr, 16), -1);
            EXPECT_STREQ(anvil_get_last_error(), "task 5 failed: bad input");
            // The pool stays usable after a failure.
            std::atomic<int> count{0};
            parallel_launch(16, [&](int, int) { ++count; });
            EXPECT_EQ(count.load(), 16);
        }
        ASSERT_EQ(anvil_parallel_launch(&fail_silently, nullptr, 4), -1);
        EXPECT_NE(std::string(anvil_get_last_error()).find("parallel task 2 of 4 failed"),
                  std::string::npos)
            << anvil_get_last_error();
    }
}

TEST_F(ThreadPoolTest, CppExceptionsAreRethrown) {
    ASSERT_EQ(anvil_set_num_threads(4), 0);
    try {
        parallel_launch(32, [](int task, int) {
            if (task == 17) throw std::out_of_range("index 17 out of range");
        });
        FAIL();
    } catch (const std::out_of_range& e) {
        EXPECT_STREQ(e.what(), "index 17 out of range");
    }
    EXPECT_EQ(anvil_parallel_launch(nullptr, nullptr, 4), -1);
}

TEST_F(ThreadPoolTest, ManyQuickLaunches) {
    ASSERT_EQ(anvil_set_num_threads(4), 0);
    constexpr int kLaunches = 10000;
    std::vector<int64_t> sums(4, 0);
    for (int i = 0; i < kLaunches; ++i) {
        parallel_launch(4, [&](int task, int) { sums[task] += task + 1; });
    }
    for (int task = 0; task < 4; ++task) EXPECT_EQ(sums[task], int64_t{kLaunches} * (task + 1));
}

// park_idle_workers between launches (what an external module does before its OpenMP team
// runs), from inside a task (a no-op there: the launching thread holds the pool) and before a
// pool exists: launches after it still run every task once.
TEST_F(ThreadPoolTest, ParkedWorkersWakeForTheNextLaunch) {
    ASSERT_EQ(anvil_set_num_threads(3), 0);
    park_idle_workers();  // the resize dropped the pool: nothing to park
    std::vector<int64_t> sums(3, 0);
    for (int i = 0; i < 200; ++i) {
        parallel_launch(3, [&](int task, int) {
            sums[task] += task + 1;
            if (task == 0 && i % 2 == 0) park_idle_workers();
        });
        park_idle_workers();
        if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    for (int task = 0; task < 3; ++task) EXPECT_EQ(sums[task], int64_t{200} * (task + 1));
}

TEST_F(ThreadPoolTest, ParallelForCoversTheRange) {
    for (int threads : {1, 3, 4}) {
        ASSERT_EQ(anvil_set_num_threads(threads), 0);
        for (int64_t n : {0, 1, 2, 5, 1001}) {
            std::vector<std::atomic<int>> hits(n + 10);
            parallel_for(10, 10 + n, [&](int64_t i) { hits[i].fetch_add(1); });
            for (int64_t i = 0; i < n + 10; ++i) EXPECT_EQ(hits[i].load(), i >= 10 ? 1 : 0);
        }
    }
}

// Two host threads launching at once: one gets the pool, the other runs serially; both finish.
TEST_F(ThreadPoolTest, ConcurrentLaunchesFromHostThreads) {
    ASSERT_EQ(anvil_set_num_threads(3), 0);
    auto body = [] {
        for (int i = 0; i < 500; ++i) {
            std::vector<std::atomic<int>> runs(9);
            CountClosure closure{&runs};
            if (anvil_parallel_launch(&count_runs, &closure, 9) != 0) return false;
            for (auto& r : runs) {
                if (r.load() != 1) return false;
            }
        }
        return true;
    };
    bool ok_a = false, ok_b = false;
    std::thread a([&] { ok_a = body(); });
    std::thread b([&] { ok_b = body(); });
    a.join();
    b.join();
    EXPECT_TRUE(ok_a);
    EXPECT_TRUE(ok_b);
}

TEST_F(ThreadPoolTest, RejectsBadThreadCounts) {
    EXPECT_EQ(anvil_set_num_threads(-1), -1);
    EXPECT_NE(std::string(anvil_get_last_error()).find("-1 threads requested"), std::string::npos);
    EXPECT_THROW(set_num_threads(-2), UserError);
}

// The runtime registers the pool's size functions itself (runtime_functions.cpp), so C and C++
// callers find them without the Python bindings.
TEST_F(ThreadPoolTest, RegistryFunctionsReadAndResizeThePool) {
    PackedFunc get = get_global_func("runtime.num_threads");
    PackedFunc set = get_global_func("runtime.set_num_threads");
    PackedFunc fallback = get_global_func("runtime.default_num_threads");
    ASSERT_TRUE(get.defined() && set.defined() && fallback.defined());
    EXPECT_EQ(set(int64_t{3}).as_int(), 3);
    EXPECT_EQ(get().as_int(), 3);
    EXPECT_EQ(num_threads(), 3);
    EXPECT_EQ(set(int64_t{0}).as_int(), fallback().as_int());
    EXPECT_THROW(set(int64_t{-1}), UserError);
}

}  // namespace
}  // namespace anvil::runtime

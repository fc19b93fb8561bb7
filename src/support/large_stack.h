// Running a call on a thread with a large stack. The graph and loop-IR passes walk expressions
// recursively, one frame per nested node, so a model that is one long chain of thousands of ops
// would overflow the 8 MiB main-thread stack (a crash, not an error). Compiling on a thread whose
// stack is reserved large (address space only: pages are committed as they are touched) makes
// such a model compile like any other.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

namespace anvil {

inline constexpr size_t kLargeStackBytes = size_t{1} << 30;

// Runs `body` on a new thread with a stack of `stack_bytes` and waits for it; an exception it
// throws is rethrown here. Falls back to calling `body` directly when no such thread can be made.
void run_with_large_stack(const std::function<void()>& body, size_t stack_bytes = kLargeStackBytes);

template <class F>
auto call_with_large_stack(F&& f) -> std::invoke_result_t<F> {
    using R = std::invoke_result_t<F>;
    if constexpr (std::is_void_v<R>) {
        run_with_large_stack([&] { f(); });
    } else {
        std::optional<R> result;
        run_with_large_stack([&] { result.emplace(f()); });
        return std::move(*result);
    }
}

}  // namespace anvil

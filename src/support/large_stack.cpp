#include "support/large_stack.h"

#include <pthread.h>

namespace anvil {

namespace {

struct Call {
    const std::function<void()>* body;
    std::exception_ptr error;
};

void* trampoline(void* arg) {
    auto* call = static_cast<Call*>(arg);
    try {
        (*call->body)();
    } catch (...) {
        call->error = std::current_exception();
    }
    return nullptr;
}

}  // namespace

void run_with_large_stack(const std::function<void()>& body, size_t stack_bytes) {
    Call call{&body, nullptr};
    pthread_attr_t attr;
    pthread_t thread;
    bool started = pthread_attr_init(&attr) == 0;
    if (started) {
        started = pthread_attr_setstacksize(&attr, stack_bytes) == 0 &&
                  pthread_create(&thread, &attr, trampoline, &call) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!started) {
        body();  // no thread for it (address space or thread limits): the caller's stack
        return;
    }
    pthread_join(thread, nullptr);
    if (call.error) std::rethrow_exception(call.error);
}

}  // namespace anvil

// Intrusive reference counting for IR nodes and runtime objects.
//
// Every IR node derives from Object and is held through Ref<T>, a pointer to a const node.
// Nodes are immutable once built, so sharing subtrees between IRs is always safe; the count is
// atomic because compiled modules and the thread pool may drop references from several threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>

namespace anvil {

class Object {
public:
    Object() = default;
    Object(const Object&) : ref_count_(0) {}
    Object& operator=(const Object&) { return *this; }
    virtual ~Object() = default;

    void inc_ref() const { ref_count_.fetch_add(1, std::memory_order_relaxed); }
    void dec_ref() const {
        if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }
    int use_count() const { return ref_count_.load(std::memory_order_relaxed); }

private:
    mutable std::atomic<int> ref_count_{0};
};

// A counted pointer to a const T. Converts implicitly to Ref<Base>; `as<U>()` downcasts by the
// node's kind tag (see ir/expr.h), never by dynamic_cast.
template <typename T>
class Ref {
public:
    using element_type = T;

    Ref() = default;
    Ref(std::nullptr_t) {}
    explicit Ref(const T* p) : ptr_(p) {
        if (ptr_) ptr_->inc_ref();
    }
    Ref(const Ref& other) : ptr_(other.ptr_) {
        if (ptr_) ptr_->inc_ref();
    }
    Ref(Ref&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
    template <typename U, typename = std::enable_if_t<std::is_base_of_v<T, U>>>
    Ref(const Ref<U>& other) : Ref(static_cast<const T*>(other.get())) {}

    Ref& operator=(Ref other) noexcept {
        std::swap(ptr_, other.ptr_);
        return *this;
    }
    ~Ref() {
        if (ptr_) ptr_->dec_ref();
    }

    const T* get() const { return ptr_; }
    const T* operator->() const { return ptr_; }
    const T& operator*() const { return *ptr_; }
    explicit operator bool() const { return ptr_ != nullptr; }
    bool defined() const { return ptr_ != nullptr; }

    // Identity comparison: two handles are equal when they point to the same node.
    bool same_as(const Ref& other) const { return ptr_ == other.ptr_; }
    friend bool operator==(const Ref& a, std::nullptr_t) { return a.ptr_ == nullptr; }

    // Downcast by kind tag; U must declare `static constexpr auto kKind` and T a `kind` field.
    template <typename U>
    const U* as() const {
        if (ptr_ && ptr_->kind == U::kKind) return static_cast<const U*>(ptr_);
        return nullptr;
    }
    template <typename U>
    bool is() const {
        return ptr_ && ptr_->kind == U::kKind;
    }
    // Downcast to a typed handle; the caller has checked `is<U>()`.
    template <typename U>
    Ref<U> cast() const {
        return Ref<U>(as<U>());
    }

private:
    const T* ptr_ = nullptr;
};

template <typename T, typename... Args>
Ref<T> make_ref(Args&&... args) {
    return Ref<T>(new T(std::forward<Args>(args)...));
}

// Hash and equality by identity, for maps keyed by node (variables, tensors, buffers).
struct RefHash {
    template <typename T>
    size_t operator()(const Ref<T>& r) const {
        return std::hash<const void*>()(r.get());
    }
};
struct RefEqual {
    template <typename T>
    bool operator()(const Ref<T>& a, const Ref<T>& b) const {
        return a.get() == b.get();
    }
};

}  // namespace anvil

#pragma once

#include <cstddef>
#include <memory_resource>
#include <type_traits>

namespace switchyard::core {

// Allocates from a memory resource (a request's or an exchange's arena). A copy of a container
// using it allocates from the heap instead, so the copy may outlive the arena.
template <class T>
class ArenaAllocator {
  public:
    using value_type = T;
    using propagate_on_container_move_assignment = std::true_type;

    // Without an arena: the heap.
    ArenaAllocator() noexcept : resource_(std::pmr::new_delete_resource()) {}
    explicit ArenaAllocator(std::pmr::memory_resource* resource) noexcept : resource_(resource) {}
    template <class U>
    ArenaAllocator(const ArenaAllocator<U>& other) noexcept : resource_(other.Resource()) {}

    T* allocate(std::size_t n) {
        return static_cast<T*>(resource_->allocate(n * sizeof(T), alignof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept {
        resource_->deallocate(p, n * sizeof(T), alignof(T));
    }
    ArenaAllocator select_on_container_copy_construction() const noexcept {
        return ArenaAllocator(std::pmr::new_delete_resource());
    }
    std::pmr::memory_resource* Resource() const noexcept { return resource_; }
    template <class U>
    bool operator==(const ArenaAllocator<U>& other) const noexcept {
        return resource_ == other.Resource();
    }

  private:
    std::pmr::memory_resource* resource_;
};

}  // namespace switchyard::core

#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace switchyard::limits {

// The request bodies being served, in bytes, in all and per client (by a hash of the credential it
// presented): a body costs several times its size while it is parsed, translated and sent, so what
// is in flight must be bounded, in all and for each client, or a few clients with large bodies take
// every other client's memory. A client's first body, and the first of all, always fits: no size
// within server.max_body_bytes is refused for good. Thread-safe.
class BodyBudget final {
  public:
    enum class Refusal { kNone, kClient, kTotal };

    // Bytes reserved for one request until it is destroyed (or moved from).
    class Reservation final {
      public:
        Reservation() = default;
        Reservation(Reservation&& other) noexcept { *this = std::move(other); }
        Reservation& operator=(Reservation&& other) noexcept;
        ~Reservation() { Release(); }
        std::size_t Bytes() const { return bytes_; }

      private:
        friend class BodyBudget;
        void Release();
        BodyBudget* budget_ = nullptr;
        std::uint64_t client_ = 0;
        std::size_t bytes_ = 0;
    };

    // Reserves `bytes` for `client` when its bodies in flight stay within `per_client` and all
    // bodies within `total` (0: no bound), else says which bound refused it.
    Refusal Reserve(std::uint64_t client, std::size_t bytes, std::size_t total,
                    std::size_t per_client, Reservation& reservation);

    std::size_t InFlight() const;
    std::size_t InFlightOf(std::uint64_t client) const;

  private:
    void Release(std::uint64_t client, std::size_t bytes);

    mutable std::mutex mutex_;
    std::size_t total_ = 0;
    std::unordered_map<std::uint64_t, std::size_t> clients_;
};

}  // namespace switchyard::limits

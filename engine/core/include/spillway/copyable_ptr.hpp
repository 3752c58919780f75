#pragma once
// A unique_ptr that copies what it points to: state that is allocated lazily (a window's
// histograms) but must still copy with its owner when a sweep forks a breaker.
#include <memory>
#include <utility>

namespace spillway {

template <class T>
class CopyablePtr : public std::unique_ptr<T> {
 public:
  CopyablePtr() = default;
  CopyablePtr(std::unique_ptr<T> p) : std::unique_ptr<T>(std::move(p)) {}  // NOLINT: as unique_ptr
  CopyablePtr(const CopyablePtr& o) : std::unique_ptr<T>(o ? std::make_unique<T>(*o) : nullptr) {}
  CopyablePtr(CopyablePtr&&) noexcept = default;
  CopyablePtr& operator=(const CopyablePtr& o) {
    if (this != &o) this->reset(o ? new T(*o) : nullptr);
    return *this;
  }
  CopyablePtr& operator=(CopyablePtr&&) noexcept = default;
  CopyablePtr& operator=(std::unique_ptr<T> p) {
    std::unique_ptr<T>::operator=(std::move(p));
    return *this;
  }
};

}  // namespace spillway

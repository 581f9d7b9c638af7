// A vector that keeps its first N elements inline, so shapes and strides of ordinary tensors never
// touch the heap: per-op overhead on small tensors is dominated by such allocations otherwise.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <vector>

namespace ember {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable values");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  explicit SmallVector(size_t n, T value = T()) { resize(n, value); }
  template <typename It, typename = decltype(*std::declval<It>())>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U, T>>>
  SmallVector(const std::vector<U>& v) {  // NOLINT: implicit like PyTorch's IntArrayRef
    assign(v.begin(), v.end());
  }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { steal(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) {
      size_ = 0;
      assign(o.begin(), o.end());
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~SmallVector() { release(); }

  template <typename It>
  void assign(It first, It last) {
    size_t n = static_cast<size_t>(std::distance(first, last));
    reserve(n);
    T* d = data();
    for (size_t i = 0; i < n; ++i, ++first) d[i] = static_cast<T>(*first);
    size_ = n;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return heap_ ? heap_ : inline_; }
  const T* data() const { return heap_ ? heap_ : inline_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }

  void reserve(size_t n) {
    if (n <= capacity_) return;
    size_t cap = std::max(n, capacity_ * 2);
    T* fresh = new T[cap];
    std::memcpy(fresh, data(), size_ * sizeof(T));
    delete[] heap_;
    heap_ = fresh;
    capacity_ = cap;
  }
  void resize(size_t n, T value = T()) {
    reserve(n);
    T* d = data();
    for (size_t i = size_; i < n; ++i) d[i] = value;
    size_ = n;
  }
  void push_back(T v) {
    if (size_ == capacity_) reserve(size_ + 1);
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  iterator insert(const_iterator pos, T v) {
    size_t i = static_cast<size_t>(pos - begin());
    push_back(v);
    T* d = data();
    for (size_t j = size_ - 1; j > i; --j) d[j] = d[j - 1];
    d[i] = v;
    return d + i;
  }
  iterator erase(const_iterator pos) {
    size_t i = static_cast<size_t>(pos - begin());
    T* d = data();
    for (size_t j = i; j + 1 < size_; ++j) d[j] = d[j + 1];
    --size_;
    return d + i;
  }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }

 private:
  void release() {
    delete[] heap_;
    heap_ = nullptr;
    capacity_ = N;
    size_ = 0;
  }
  void steal(SmallVector& o) {
    if (o.heap_) {
      heap_ = o.heap_;
      capacity_ = o.capacity_;
      size_ = o.size_;
      o.heap_ = nullptr;
      o.capacity_ = N;
      o.size_ = 0;
    } else {
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(T));
      size_ = o.size_;
    }
  }

  T inline_[N];
  T* heap_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = N;
};

}  // namespace ember

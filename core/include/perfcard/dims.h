// A value's inferred dims, as shape inference keeps them for every value of a graph. Up to four dims (the
// rank of most tensors) sit inline; more go to the heap. A std::vector costs 24 bytes plus a 32-byte heap
// block per value, which a million-value graph feels (docs/robustness.md); this costs 40 and no allocation.
// It reads like the std::vector the shape rules were written against, and converts to and from one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace perfcard {

class Dims {
 public:
  using value_type = std::int64_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = std::int64_t&;
  using const_reference = const std::int64_t&;
  using pointer = std::int64_t*;
  using const_pointer = const std::int64_t*;
  using iterator = std::int64_t*;
  using const_iterator = const std::int64_t*;

  Dims() noexcept {}  // user-provided: clang 14 refuses a const ValueShape otherwise
  Dims(std::initializer_list<std::int64_t> d) { assign(d.begin(), d.end()); }
  Dims(const std::vector<std::int64_t>& d) { assign(d.begin(), d.end()); }  // NOLINT: a drop-in for the vector
  Dims(size_type n, std::int64_t value) { assign(n, value); }
  template <std::input_iterator It>
  Dims(It first, It last) { assign(first, last); }
  Dims(const Dims& o) { assign(o.begin(), o.end()); }
  Dims(Dims&& o) noexcept { take(o); }
  Dims& operator=(const Dims& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Dims& operator=(Dims&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  Dims& operator=(std::initializer_list<std::int64_t> d) {
    assign(d.begin(), d.end());
    return *this;
  }
  ~Dims() { release(); }

  operator std::vector<std::int64_t>() const { return {begin(), end()}; }  // NOLINT: as above
  std::vector<std::int64_t> vec() const { return {begin(), end()}; }

  size_type size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::int64_t* data() { return on_heap() ? heap_ : inline_; }
  const std::int64_t* data() const { return on_heap() ? heap_ : inline_; }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  std::int64_t& operator[](size_type i) { return data()[i]; }
  const std::int64_t& operator[](size_type i) const { return data()[i]; }
  std::int64_t& front() { return data()[0]; }
  const std::int64_t& front() const { return data()[0]; }
  std::int64_t& back() { return data()[size_ - 1]; }
  const std::int64_t& back() const { return data()[size_ - 1]; }

  void reserve(size_type n) {
    if (n <= cap_) return;
    if (n > UINT32_MAX) throw std::length_error("Dims::reserve");
    auto* grown = new std::int64_t[n];
    std::copy(begin(), end(), grown);
    const std::uint32_t size = size_;
    release();
    heap_ = grown;
    size_ = size;
    cap_ = std::uint32_t(n);
  }
  void clear() { size_ = 0; }
  void push_back(std::int64_t v) {
    if (size_ == cap_) reserve(std::size_t(cap_) * 2);
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void resize(size_type n, std::int64_t value = 0) {
    reserve(n);
    if (n > size_) std::fill(data() + size_, data() + n, value);
    size_ = std::uint32_t(n);
  }
  void assign(size_type n, std::int64_t value) {
    size_ = 0;
    resize(n, value);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    size_ = 0;
    reserve(size_type(std::distance(first, last)));
    for (; first != last; ++first) data()[size_++] = std::int64_t(*first);
  }
  iterator insert(const_iterator pos, std::int64_t v) { return insert(pos, &v, &v + 1); }
  template <std::input_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    const auto at = size_type(pos - begin());
    const std::vector<std::int64_t> added(first, last);  // may view this very object
    reserve(size_ + added.size());
    std::copy_backward(begin() + at, end(), end() + added.size());
    std::copy(added.begin(), added.end(), begin() + at);
    size_ += std::uint32_t(added.size());
    return begin() + at;
  }
  iterator erase(const_iterator first, const_iterator last) {
    const auto at = size_type(first - begin()), n = size_type(last - first);
    std::copy(begin() + at + n, end(), begin() + at);
    size_ -= std::uint32_t(n);
    return begin() + at;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }

  friend bool operator==(const Dims& a, const Dims& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
  friend bool operator==(const Dims& a, const std::vector<std::int64_t>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  static constexpr std::uint32_t kInline = 4;
  bool on_heap() const { return cap_ > kInline; }
  void release() {
    if (on_heap()) delete[] heap_;
    cap_ = kInline;
    size_ = 0;
  }
  void take(Dims& o) {
    size_ = o.size_;
    cap_ = o.cap_;
    if (o.on_heap()) heap_ = o.heap_;
    else std::memcpy(inline_, o.inline_, sizeof inline_);
    o.cap_ = kInline;
    o.size_ = 0;
  }

  union {
    std::int64_t inline_[kInline] = {};
    std::int64_t* heap_;
  };
  std::uint32_t size_ = 0, cap_ = kInline;
};
static_assert(sizeof(Dims) == 40, "four dims inline and two counts");

}  // namespace perfcard

// A value's inferred dims, as shape inference keeps them for every value of a graph. Up to four dims (the
// rank of most tensors) sit inline; more go to the heap. A std::vector costs 24 bytes plus a 32-byte heap
// block per value, which a million-value graph feels (docs/robustness.md); this costs 40 and no allocation.
// It reads like the std::vector the shape rules were written against; it is made from one implicitly and
// turned into one only explicitly (vec()), so no copy hides in a call.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <type_traits>
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
  Dims(std::initializer_list<std::int64_t> d) { copy_from(d.begin(), d.size()); }
  Dims(const std::vector<std::int64_t>& d) { copy_from(d.data(), d.size()); }  // NOLINT: a drop-in for the vector
  Dims(size_type n, std::int64_t value) { assign(n, value); }
  template <std::input_iterator It>
  Dims(It first, It last) { assign(first, last); }
  // Out of line, as are the growing members below: every rule makes, copies and drops shapes, and wasm's
  // download pays for each inlined copy (40 KB of wasm when these were inline).
  Dims(const Dims& o);
  Dims(Dims&& o) noexcept;
  Dims& operator=(const Dims& o);
  Dims& operator=(Dims&& o) noexcept;
  Dims& operator=(std::initializer_list<std::int64_t> d) {
    copy_from(d.begin(), d.size());
    return *this;
  }
  ~Dims();

  std::vector<std::int64_t> vec() const;  // by name only: a copy never hides in a conversion

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
    if (n > cap_) grow(n);
  }
  void clear() { size_ = 0; }
  void push_back(std::int64_t v) {
    if (size_ == cap_) grow(std::size_t(cap_) * 2);
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void resize(size_type n, std::int64_t value = 0);
  void assign(size_type n, std::int64_t value) {
    size_ = 0;
    resize(n, value);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    if constexpr (std::contiguous_iterator<It> && std::is_same_v<std::iter_value_t<It>, std::int64_t>) {
      copy_from(std::to_address(first), size_type(last - first));
    } else {
      const std::vector<std::int64_t> d(first, last);
      copy_from(d.data(), d.size());
    }
  }
  iterator insert(const_iterator pos, std::int64_t v) { return insert_copy(pos, &v, 1); }
  template <std::input_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    const std::vector<std::int64_t> added(first, last);  // may view this very object
    return insert_copy(pos, added.data(), added.size());
  }
  iterator erase(const_iterator first, const_iterator last);
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }

  friend bool operator==(const Dims& a, const Dims& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
  friend bool operator==(const Dims& a, const std::vector<std::int64_t>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  static constexpr std::uint32_t kInline = 4;
  bool on_heap() const { return cap_ > kInline; }
  void grow(size_type n);
  void copy_from(const std::int64_t* d, size_type n);  // d may be a part of this object: it never grows then
  iterator insert_copy(const_iterator pos, const std::int64_t* d, size_type n);  // d must not view this object
  void release();
  void take(Dims& o);

  union {
    std::int64_t inline_[kInline];  // only the first size_ are ever read
    std::int64_t* heap_;
  };
  std::uint32_t size_ = 0, cap_ = kInline;
};
static_assert(sizeof(Dims) == 40, "four dims inline and two counts");

}  // namespace perfcard

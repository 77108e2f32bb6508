#include "perfcard/dims.h"

#include <stdexcept>

namespace perfcard {

std::vector<std::int64_t> Dims::vec() const { return {begin(), end()}; }

void Dims::grow(size_type n) {
  if (n <= cap_) return;
  if (n > UINT32_MAX) throw std::length_error("Dims: more than 2^32 dims");  // as std::vector past its max
  auto* grown = new std::int64_t[n];
  std::copy(begin(), end(), grown);
  if (on_heap()) delete[] heap_;
  heap_ = grown;
  cap_ = std::uint32_t(n);
}

Dims::Dims(const Dims& o) { copy_from(o.data(), o.size()); }
Dims::Dims(Dims&& o) noexcept { take(o); }
Dims& Dims::operator=(const Dims& o) {
  if (this != &o) copy_from(o.data(), o.size());
  return *this;
}
Dims& Dims::operator=(Dims&& o) noexcept {
  if (this != &o) {
    release();
    take(o);
  }
  return *this;
}
Dims::~Dims() { release(); }

void Dims::release() {
  if (on_heap()) delete[] heap_;
  cap_ = kInline;
  size_ = 0;
}

void Dims::take(Dims& o) {
  size_ = o.size_;
  cap_ = o.cap_;
  if (o.on_heap()) heap_ = o.heap_;
  else std::copy(o.inline_, o.inline_ + o.size_, inline_);
  o.cap_ = kInline;
  o.size_ = 0;
}

void Dims::copy_from(const std::int64_t* d, size_type n) {
  size_ = 0;
  reserve(n);
  std::copy(d, d + n, data());
  size_ = std::uint32_t(n);
}

void Dims::resize(size_type n, std::int64_t value) {
  reserve(n);
  if (n > size_) std::fill(data() + size_, data() + n, value);
  size_ = std::uint32_t(n);
}

Dims::iterator Dims::insert_copy(const_iterator pos, const std::int64_t* d, size_type n) {
  const auto at = size_type(pos - begin());
  reserve(size_ + n);
  std::copy_backward(begin() + at, end(), end() + n);
  std::copy(d, d + n, begin() + at);
  size_ += std::uint32_t(n);
  return begin() + at;
}

Dims::iterator Dims::erase(const_iterator first, const_iterator last) {
  const auto at = size_type(first - begin()), n = size_type(last - first);
  std::copy(begin() + at + n, end(), begin() + at);
  size_ -= std::uint32_t(n);
  return begin() + at;
}

}  // namespace perfcard

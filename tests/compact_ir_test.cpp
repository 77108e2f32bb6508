// The compact IR's own types: Dims (inline small vector of inferred dims) and PoolStr (a name as one
// pointer into the model's StringPool). Both replace standard types the rest of the core was written
// against, so they are checked against those types, operation by operation.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "perfcard/dims.h"
#include "perfcard/graph.h"
#include "perfcard/shape_inference.h"

using perfcard::Dims;
using perfcard::PoolStr;
using perfcard::StringPool;

namespace {

bool same(const Dims& d, const std::vector<std::int64_t>& v) {
  return d.size() == v.size() && std::vector<std::int64_t>(d.begin(), d.end()) == v;
}

}  // namespace

TEST_CASE("Dims does what std::vector does, across the inline and heap forms") {
  std::mt19937 rng(20261126);
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  for (int trial = 0; trial < 200; ++trial) {
    Dims d;
    std::vector<std::int64_t> v;
    for (int step = 0; step < 60; ++step) {
      const std::int64_t x = pick(1000) - 1;
      switch (pick(13)) {
        case 0: case 1: d.push_back(x); v.push_back(x); break;
        case 2: if (!v.empty()) { d.pop_back(); v.pop_back(); } break;
        case 3: { const auto n = std::size_t(pick(12)); d.resize(n, x); v.resize(n, x); } break;
        case 4: { const auto at = pick(int(v.size()) + 1); d.insert(d.begin() + at, x); v.insert(v.begin() + at, x); } break;
        case 5: {  // a range of itself, as rules do when they splice a shape into its own copy
          const auto at = pick(int(v.size()) + 1);
          const std::vector<std::int64_t> before = v;
          d.insert(d.begin() + at, d.begin(), d.end());
          v.insert(v.begin() + at, before.begin(), before.end());
        } break;
        case 6: if (!v.empty()) { const auto at = pick(int(v.size())); d.erase(d.begin() + at); v.erase(v.begin() + at); } break;
        case 7: if (!v.empty()) {
            const auto a = pick(int(v.size())), b = a + pick(int(v.size()) - a + 1);
            d.erase(d.begin() + a, d.begin() + b);
            v.erase(v.begin() + a, v.begin() + b);
          } break;
        case 8: { const auto n = std::size_t(pick(10)); d.assign(n, x); v.assign(n, x); } break;
        case 9: {  // Dims(int, int) is a count and a value, as for std::vector, not an iterator pair
          const int n = pick(9);
          d = Dims(std::size_t(n), x);
          v = std::vector<std::int64_t>(std::size_t(n), x);
        } break;
        case 10: { Dims copy(d); d = copy; Dims moved(std::move(copy)); d = std::move(moved); } break;
        case 11: { const std::vector<std::int64_t> back = d.vec(); d = back; } break;
        case 12: d.clear(); v.clear(); break;
      }
      REQUIRE(same(d, v));
      REQUIRE(d == v);
      if (!v.empty()) REQUIRE(d.back() == v.back());
    }
  }
}

TEST_CASE("Dims keeps up to four dims inline and grows past them without losing any") {
  Dims d{1, 3, 224, 224};
  const std::int64_t* inline_at = d.data();
  d.push_back(7);  // the fifth dim moves them to the heap
  CHECK(d.data() != inline_at);
  CHECK(same(d, {1, 3, 224, 224, 7}));
  Dims moved = std::move(d);
  CHECK(same(moved, {1, 3, 224, 224, 7}));
  CHECK(d.empty());  // NOLINT: a moved-from Dims is empty and usable
  d.push_back(2);
  CHECK(same(d, {2}));
  static_assert(sizeof(Dims) == 40);
  // What a million-node graph pays per node and value (docs/robustness.md), on 64-bit hosts.
  static_assert(sizeof(void*) != 8 || sizeof(perfcard::ValueShape) <= 64);
  static_assert(sizeof(void*) != 8 || sizeof(perfcard::Node) <= 64);
  static_assert(sizeof(void*) != 8 || sizeof(perfcard::Value) <= 40);
}

TEST_CASE("PoolStr reads back what the StringPool stored, long or empty, and compares as a string_view") {
  StringPool pool;
  const std::string long_name(70000, 'x');  // past a chunk: its own block
  const PoolStr a = pool.store("conv1"), b = pool.store(long_name), e = pool.store("");
  const PoolStr op1 = pool.intern("Conv"), op2 = pool.intern("Conv");
  CHECK(a == std::string_view("conv1"));
  CHECK(a.view() == "conv1");
  CHECK(b.size() == long_name.size());
  CHECK(std::string(b) == long_name);
  CHECK(e.empty());
  CHECK(PoolStr().empty());
  CHECK(op1.data() == op2.data());  // interned: kept once
  CHECK(op1 == "Conv");
  CHECK(op1 == op2);
  CHECK_FALSE(a == op1);
  static_assert(sizeof(PoolStr) == sizeof(void*));
}

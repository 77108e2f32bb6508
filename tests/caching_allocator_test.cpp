// What PyTorch's caching allocator reserves for tensors alive together, by its documented segment sizes.
#include <catch2/catch.hpp>

#include "perfcard/caching_allocator.h"

namespace {
constexpr double MiB = 1024.0 * 1024.0;
}

TEST_CASE("blocks round to 512 bytes; small ones share 2 MiB segments, medium ones 20 MiB, large ones their own") {
  perfcard::SegmentPacking p;
  CHECK(p.reserved() == 0);
  p.add(1);  // one byte still takes a 512-byte block, in a 2 MiB segment
  CHECK(p.allocated() == 1);
  CHECK(p.reserved() == 2 * MiB);
  for (int i = 0; i < 4; ++i) p.add(0.5 * MiB);  // 2 MiB and a block more: a second small segment
  CHECK(p.reserved() == 4 * MiB);
  p.add(3 * MiB);  // medium: a 20 MiB segment
  p.add(9 * MiB);  // shares it
  CHECK(p.reserved() == 4 * MiB + 20 * MiB);
  p.add(10 * MiB + 1);  // large: its own segment, rounded up to 2 MiB
  CHECK(p.reserved() == 4 * MiB + 20 * MiB + 12 * MiB);
  p.add(0);  // nothing allocated for an empty tensor
  p.add(-5);
  CHECK(p.allocated() == Approx(1 + 2 * MiB + 12 * MiB + 10 * MiB + 1));
}

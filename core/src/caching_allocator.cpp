#include "perfcard/caching_allocator.h"

#include <cmath>

namespace perfcard {
namespace {

constexpr double kMinBlock = 512, kSmallSize = 1 << 20, kSmallBuffer = 2 << 20, kLargeBuffer = 20 << 20,
                 kMinLargeAlloc = 10 << 20, kRoundLarge = 2 << 20;

double round_up(double x, double to) { return std::ceil(x / to) * to; }

}  // namespace

void SegmentPacking::add(double bytes) {
  if (!(bytes > 0)) return;
  allocated_ += bytes;
  const double block = round_up(bytes, kMinBlock);
  if (block <= kSmallSize) small_ += block;
  else if (block < kMinLargeAlloc) medium_ += block;
  else large_ += round_up(block, kRoundLarge);
}

double SegmentPacking::reserved() const {
  return round_up(small_, kSmallBuffer) + round_up(medium_, kLargeBuffer) + large_;
}

}  // namespace perfcard

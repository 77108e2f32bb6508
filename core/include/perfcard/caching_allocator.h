// What PyTorch's CUDA caching allocator reserves for tensors alive together, from its documented constants
// (c10/cuda/CUDACachingAllocator.cpp): every block is a multiple of 512 bytes; blocks of at most 1 MiB are
// carved from 2 MiB segments, blocks under 10 MiB from 20 MiB segments, larger ones get a segment of their
// own rounded up to 2 MiB. Segments packed full give a lower bound of what the device reports: freed
// blocks cached between steps and fragmentation add to it, and need a GPU to measure (issue 15).
#pragma once

namespace perfcard {

class SegmentPacking {
 public:
  void add(double bytes);  // one tensor's allocation
  double reserved() const;
  double allocated() const { return allocated_; }

 private:
  double small_ = 0, medium_ = 0, large_ = 0, allocated_ = 0;
};

}  // namespace perfcard

//===- JitMemorySlab.h - One address range for all of a JIT's sections ---===//
//
// The JIT links objects built for x86-64's small code model: code reaches
// its constants, its GOT entries and its call stubs' GOT slots through
// 32-bit PC-relative displacements, so every section of an object must lie
// within 2 GiB of its code. SectionMemoryManager maps each kind of section
// (code, read-only, read-write) with a separate mmap wherever the kernel
// finds room; with gigabytes of arena and weights mapped in between, a
// stub's GOT slot landed over 2 GiB from its code, RuntimeDyld wrapped the
// displacement without a word (it checks only in assert builds) and the
// stub jumped through arena data.
//
// JitMemorySlab reserves one range of address space up front (no memory:
// PROT_NONE) and hands its pages out to SectionMemoryManager, so every
// section of every object of one JIT lies within the range, whatever else
// the process maps. jitSlabBytes() sizes the range from the objects.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_JITMEMORYSLAB_H
#define KCC_ENGINE_JITMEMORYSLAB_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace kcc {

class JitMemorySlab : public llvm::SectionMemoryManager::MemoryMapper {
public:
  /// The most bytes one slab may span: all of it within reach of a 32-bit
  /// displacement from anywhere in it.
  static constexpr size_t kMaxBytes = size_t(1) << 31;

  /// Reserves `bytes` (rounded up to pages; at most kMaxBytes) of address
  /// space. Throws kcc::Error when the range cannot be reserved.
  explicit JitMemorySlab(size_t bytes);
  ~JitMemorySlab() override;
  JitMemorySlab(const JitMemorySlab &) = delete;
  JitMemorySlab &operator=(const JitMemorySlab &) = delete;

  /// The next pages of the slab, with `flags` (sys::Memory::ProtectionFlags);
  /// ENOMEM when the slab is spent. The hint is moot: it is all near.
  llvm::sys::MemoryBlock
  allocateMappedMemory(llvm::SectionMemoryManager::AllocationPurpose purpose,
                       size_t numBytes, const llvm::sys::MemoryBlock *nearBlock,
                       unsigned flags, std::error_code &ec) override;
  std::error_code protectMappedMemory(const llvm::sys::MemoryBlock &block,
                                      unsigned flags) override;
  /// Returns the pages to the system; the range stays reserved.
  std::error_code releaseMappedMemory(llvm::sys::MemoryBlock &block) override;

  const char *base() const { return base_; }
  size_t size() const { return size_; }
  size_t usedBytes() const;

private:
  char *base_ = nullptr;
  size_t size_ = 0;
  size_t used_ = 0;
  mutable std::mutex mutex_;
};

/// Enough of a slab for RuntimeDyld to load `objects` (relocatable object
/// files): every section with its alignment and a page of rounding, call
/// stubs and GOT entries for every relocation, and headroom.
size_t jitSlabBytes(llvm::ArrayRef<std::string> objects);

} // namespace kcc

#endif // KCC_ENGINE_JITMEMORYSLAB_H

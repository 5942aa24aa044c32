//===- JitMemorySlab.cpp - One address range for all of a JIT's sections -===//

#include "engine/JitMemorySlab.h"
#include "runtime/Error.h"

#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Memory.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

using namespace kcc;

namespace {

size_t pageSize() { return llvm::sys::Process::getPageSizeEstimate(); }

} // namespace

JitMemorySlab::JitMemorySlab(size_t bytes)
    : size_(llvm::alignTo(std::max<size_t>(bytes, 1), pageSize())) {
  if (size_ > kMaxBytes)
    throw Error(std::to_string(size_) +
                " bytes of compiled code exceed the 2 GiB that the small code "
                "model's 32-bit displacements reach");
  // Address space only: pages get memory when allocateMappedMemory opens them.
  void *p = ::mmap(nullptr, size_, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw Error("cannot reserve " + std::to_string(size_) +
                " bytes of address space for the compiled code: " +
                std::strerror(errno));
  base_ = static_cast<char *>(p);
}

JitMemorySlab::~JitMemorySlab() { ::munmap(base_, size_); }

size_t JitMemorySlab::usedBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_;
}

llvm::sys::MemoryBlock JitMemorySlab::allocateMappedMemory(
    llvm::SectionMemoryManager::AllocationPurpose, size_t numBytes,
    const llvm::sys::MemoryBlock *, unsigned flags, std::error_code &ec) {
  size_t bytes = llvm::alignTo(numBytes, pageSize());
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes == 0 || bytes > size_ - used_) {
    ec = std::make_error_code(std::errc::not_enough_memory);
    return llvm::sys::MemoryBlock();
  }
  llvm::sys::MemoryBlock block(base_ + used_, bytes);
  if ((ec = llvm::sys::Memory::protectMappedMemory(block, flags)))
    return llvm::sys::MemoryBlock();
  used_ += bytes;
  ec = std::error_code();
  return block;
}

std::error_code
JitMemorySlab::protectMappedMemory(const llvm::sys::MemoryBlock &block,
                                   unsigned flags) {
  return llvm::sys::Memory::protectMappedMemory(block, flags);
}

std::error_code
JitMemorySlab::releaseMappedMemory(llvm::sys::MemoryBlock &block) {
  if (!block.base() || block.allocatedSize() == 0)
    return std::error_code();
  // A fresh PROT_NONE mapping over the pages drops them and keeps the range
  // out of the kernel's hands until the slab goes.
  void *p =
      ::mmap(block.base(), block.allocatedSize(), PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED)
    return std::error_code(errno, std::generic_category());
  block = llvm::sys::MemoryBlock();
  return std::error_code();
}

size_t kcc::jitSlabBytes(llvm::ArrayRef<std::string> objects) {
  const uint64_t page = pageSize();
  // RuntimeDyld's largest call stub (AArch64: 20 bytes) plus a GOT entry.
  constexpr uint64_t kStubAndGotBytes = 32;
  uint64_t bytes = 0;
  for (const std::string &object : objects) {
    auto file = llvm::object::ObjectFile::createObjectFile(
        llvm::MemoryBufferRef(object, "kcc-jit-object"));
    if (!file) {
      // RuntimeDyld will report it; size generously meanwhile.
      llvm::consumeError(file.takeError());
      bytes += 2 * object.size() + 16 * page;
      continue;
    }
    for (const llvm::object::SectionRef &section : (*file)->sections()) {
      uint64_t relocations =
          std::distance(section.relocation_begin(), section.relocation_end());
      bytes += section.getSize() + section.getAlignment().value() + page +
               relocations * kStubAndGotBytes;
    }
    // The GOT and common symbols, each its own allocation.
    bytes += 4 * page;
  }
  // SectionMemoryManager keeps the tail of a mapping for the next section of
  // its kind only: a quarter more and a few pages absorb that waste.
  return bytes + bytes / 4 + 64 * page;
}

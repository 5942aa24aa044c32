//===- JitMemorySlabTest.cpp - The JIT's sections within 32-bit reach -----===//
//
// SectionMemoryManager over a JitMemorySlab, as CompiledFunction::load
// builds it: a code section, then every free page within 2 GiB of it
// mapped by someone else (as the arena and the weights of a large model
// come to be), then the read-only and read-write sections (constants, the
// GOT of the call stubs). All of them must stay within the slab, so within
// the 2 GiB that the small code model's PC-relative displacements reach;
// the kernel's own placement (SectionMemoryManager's default mapper) puts
// them out of reach here, as it put a GOT 3.2 GiB from its stubs in
// ConvNeXtLarge's step. Also: a spent slab refuses instead of mapping
// elsewhere, an oversized one is an error, and jitSlabBytes covers what loading
// a real train step's objects takes.
//
//===----------------------------------------------------------------------===//

#include "engine/JitMemorySlab.h"
#include "engine/CompiledFunction.h"
#include "frontend/Trace.h"
#include "frontend/models/ReferenceModels.h"
#include "frontend/training/Jit.h"
#include "runtime/Error.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/Support/Process.h"

#include "gtest/gtest.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace kcc;

namespace {

constexpr int64_t kReach = int64_t(1) << 31;

/// Maps (PROT_NONE, no memory) every free page within 2 GiB either side of
/// `near`, as gigabytes of arena and weights would, for as long as it
/// lives: a mapping made meanwhile lands out of `near`'s reach unless it
/// comes from space reserved before.
class FillReach {
public:
  explicit FillReach(const void *near) {
    uintptr_t at = reinterpret_cast<uintptr_t>(near);
    uintptr_t lo = at > uintptr_t(kReach) ? at - kReach : 0;
    uintptr_t hi = at + kReach;
    lo = std::max<uintptr_t>(lo, 1 << 20);
    std::vector<std::pair<uintptr_t, uintptr_t>> used;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      uintptr_t start = 0, end = 0;
      if (std::sscanf(line.c_str(), "%lx-%lx", &start, &end) == 2)
        used.push_back({start, end});
    }
    uintptr_t cursor = lo;
    for (auto [start, end] : used) {
      if (end <= cursor)
        continue;
      if (start >= hi)
        break;
      if (start > cursor)
        fill(cursor, start);
      cursor = end;
    }
    if (cursor < hi)
      ok_ = ok_ && fill(cursor, hi);
  }
  ~FillReach() {
    for (auto [p, bytes] : filled_)
      ::munmap(p, bytes);
  }
  bool ok() const { return ok_; }

private:
  bool fill(uintptr_t start, uintptr_t end) {
    void *want = reinterpret_cast<void *>(start);
    void *p = ::mmap(want, end - start, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                         MAP_FIXED_NOREPLACE,
                     -1, 0);
    if (p == MAP_FAILED || p != want) {
      if (p != MAP_FAILED)
        ::munmap(p, end - start);
      ok_ = false;
      return false;
    }
    filled_.push_back({p, end - start});
    return true;
  }
  std::vector<std::pair<void *, size_t>> filled_;
  bool ok_ = true;
};

bool within(const JitMemorySlab &slab, const uint8_t *p, size_t bytes) {
  auto *c = reinterpret_cast<const char *>(p);
  return c >= slab.base() && c + bytes <= slab.base() + slab.size();
}

int64_t distance(const uint8_t *a, const uint8_t *b) {
  return std::llabs(reinterpret_cast<intptr_t>(a) -
                    reinterpret_cast<intptr_t>(b));
}

TEST(JitMemorySlab, SectionsStayWithinReachAcrossLargeMappings) {
  JitMemorySlab slab(64 << 20);
  llvm::SectionMemoryManager memory(&slab);
  uint8_t *code = memory.allocateCodeSection(64 << 10, 16, 0, ".text");
  ASSERT_NE(code, nullptr);
  FillReach between(code);
  ASSERT_TRUE(between.ok())
      << "could not reserve the address space around the code";
  uint8_t *constants =
      memory.allocateDataSection(4096, 64, 1, ".rodata", /*isReadOnly=*/true);
  uint8_t *got =
      memory.allocateDataSection(1024, 8, 2, ".got", /*isReadOnly=*/false);
  ASSERT_NE(constants, nullptr);
  ASSERT_NE(got, nullptr);
  EXPECT_TRUE(within(slab, code, 64 << 10));
  EXPECT_TRUE(within(slab, constants, 4096));
  EXPECT_TRUE(within(slab, got, 1024));
  EXPECT_LT(distance(code, got), kReach);
  EXPECT_LT(distance(code, constants), kReach);
  // Pages for what was asked (each section rounds up to whole pages).
  EXPECT_LE(slab.usedBytes(), size_t(64 << 10) + 4 * 4096);
  std::string error;
  EXPECT_FALSE(memory.finalizeMemory(&error)) << error;
}

TEST(JitMemorySlab, SpentSlabRefuses) {
  size_t page = llvm::sys::Process::getPageSizeEstimate();
  JitMemorySlab slab(2 * page);
  llvm::SectionMemoryManager memory(&slab);
  EXPECT_NE(memory.allocateCodeSection(64, 16, 0, ".text"), nullptr);
  EXPECT_EQ(memory.allocateDataSection(4 * page, 8, 1, ".data", false),
            nullptr);
  EXPECT_LE(slab.usedBytes(), slab.size());
}

TEST(JitMemorySlab, BeyondReachIsAnError) {
  try {
    JitMemorySlab slab(JitMemorySlab::kMaxBytes + 1);
    FAIL() << "a slab over 2 GiB was reserved";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("exceed the 2 GiB"), std::string::npos)
        << e.what();
  }
}

/// The reference MLP's train step built to objects: jitSlabBytes leaves
/// room for loading them (the step links and runs) and stays far below the
/// reach.
TEST(JitMemorySlab, SizedForARealTrainStep) {
  mlir::MLIRContext ctx;
  registerFrontendDialects(ctx);
  TrainingConfig config;
  config.batch = 8;
  std::unique_ptr<Model> model = models::buildMlp(1);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildTrainModule(ctx, *model, config);
  CompiledArtifact artifact =
      CompiledFunction::build(*module, "train_step", CpuOptions());
  size_t objectBytes = 0;
  for (const std::string &object : artifact.objects)
    objectBytes += object.size();
  size_t bytes = jitSlabBytes(artifact.objects);
  EXPECT_GT(bytes, objectBytes);
  EXPECT_LT(bytes, JitMemorySlab::kMaxBytes / 64);
  CompiledFunction step = CompiledFunction::load(artifact);
  std::vector<NDArray> args;
  for (const TensorSpec &spec : step.argSpecs())
    args.push_back(NDArray::zeros(spec.shape, spec.dtype));
  EXPECT_EQ(step.run(args).size(), step.resultSpecs().size());
}

} // namespace

//===- CudaPtxTest.cpp - PTX of the reference train steps -----------------===//
//
// No GPU needed: the MLP, CNN and residual train steps (adam, sparse
// categorical crossentropy) go through kc-cuda-pipeline, and every kernel
// module's PTX must assemble with the toolkit's ptxas for sm_90. The host
// side must read back as a CudaProgram: launches, one cuBLASLt GEMM per
// matmul, no host loops.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaPasses.h"
#include "ir/KcDialect.h"
#include "tests/unit/cuda/CudaTestUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace kcc;
using namespace kcc::testing;

namespace {

/// Runs ptxas on `ptx`; returns its diagnostics, empty on success.
std::string assemble(const std::string &ptx, const std::string &arch) {
  llvm::SmallString<128> in, out, log;
  llvm::sys::fs::createTemporaryFile("kcc-kernel", "ptx", in);
  llvm::sys::fs::createTemporaryFile("kcc-kernel", "cubin", out);
  llvm::sys::fs::createTemporaryFile("kcc-ptxas", "log", log);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec)
      return "cannot write " + in.str().str();
    os << ptx;
  }
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(
      KCC_PTXAS, {KCC_PTXAS, "-arch=" + arch, in.str(), "-o", out.str()},
      std::nullopt, redirects, /*SecondsToWait=*/120, 0, &error);
  std::string result;
  if (rc != 0) {
    auto buf = llvm::MemoryBuffer::getFile(log);
    result = "ptxas exited with " + std::to_string(rc) + " " + error + ": " +
             (buf ? (*buf)->getBuffer().str() : std::string());
  }
  llvm::sys::fs::remove(in);
  llvm::sys::fs::remove(out);
  llvm::sys::fs::remove(log);
  return result;
}

/// Compares the `.param` types of `kernel`'s `.entry` in `ptx`.
void ptxParamTypesMatch(const std::string &ptx, const std::string &kernel,
                        const std::vector<std::string> &expected) {
  size_t at = ptx.find(".entry " + kernel + "(");
  ASSERT_NE(at, std::string::npos) << kernel;
  size_t end = ptx.find(')', at);
  std::vector<std::string> actual;
  for (size_t p = ptx.find(".param ", at); p < end;
       p = ptx.find(".param ", p + 1)) {
    size_t t = p + 7;
    actual.push_back(ptx.substr(t, ptx.find(' ', t) - t));
  }
  EXPECT_EQ(actual, expected) << kernel;
}

class TrainStepPtx : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainStepPtx, AssemblesWithPtxas) {
  mlir::MLIRContext ctx;
  auto model = referenceModel(GetParam());
  auto module = buildTrainStep(ctx, *model, GetParam(), /*batch=*/32);
  ASSERT_TRUE(module);
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  ASSERT_TRUE(step);
  unsigned matmuls = 0;
  step.walk([&](kc::MatmulOp) { ++matmuls; });

  CudaOptions opts;
  mlir::FailureOr<cuda::CudaProgram> program =
      compileForCuda(*module, "train_step", opts);
  ASSERT_TRUE(mlir::succeeded(program));
  EXPECT_FALSE(program->modules.empty());
  EXPECT_EQ(program->modules.size(), program->launches.size())
      << "one kernel module per launch";
  EXPECT_EQ(program->calls.size(), matmuls) << "one cuBLASLt GEMM per matmul";
  EXPECT_EQ(program->numInputs, step.getNumArguments());
  EXPECT_EQ(program->numResults, step.getNumResults());
  EXPECT_GT(program->arenaBytes, 0);
  for (const cuda::Launch &l : program->launches)
    EXPECT_LE(l.block[0] * l.block[1] * l.block[2], 1024) << l.kernel;

  // The runtime's parameter layout (expanded memref descriptors, scalars)
  // must be the kernel's: same count and width as the PTX signature.
  for (const cuda::Launch &l : program->launches) {
    std::vector<std::string> expected;
    for (const cuda::KernelArg &a : l.args) {
      if (a.kind == cuda::KernelArg::Kind::Memref)
        expected.insert(expected.end(), 3 + 2 * a.sizes.size(), ".u64");
      else
        expected.push_back(a.kind == cuda::KernelArg::Kind::F32   ? ".f32"
                           : a.kind == cuda::KernelArg::Kind::F64 ? ".f64"
                           : a.kind == cuda::KernelArg::Kind::I32 ? ".u32"
                                                                  : ".u64");
    }
    ptxParamTypesMatch(program->modules[l.module].ptx, l.kernel, expected);
  }

  for (const cuda::PtxModule &m : program->modules) {
    ASSERT_NE(m.ptx.find(".target sm_90"), std::string::npos) << m.name;
    ASSERT_NE(m.ptx.find(".entry"), std::string::npos) << m.name;
    std::string log = assemble(m.ptx, "sm_90");
    ASSERT_TRUE(log.empty()) << m.name << ":\n" << log << "\n" << m.ptx;
  }
  std::cout << "[ cuda     ] " << GetParam() << ": " << program->launches.size()
            << " kernels, " << program->calls.size() << " GEMMs, arena "
            << program->arenaBytes << " bytes\n";
}

INSTANTIATE_TEST_SUITE_P(ReferenceModels, TrainStepPtx,
                         ::testing::Values("mlp", "cnn", "residual"),
                         [](const auto &info) { return info.param; });

TEST(EmitPtx, OneSectionPerKernelModule) {
  mlir::MLIRContext ctx;
  auto model = referenceModel("mlp");
  auto module = buildTrainStep(ctx, *model, "mlp", 8);
  ASSERT_TRUE(module);
  std::string text;
  llvm::raw_string_ostream os(text);
  ASSERT_TRUE(mlir::succeeded(emitPtx(*module, CudaOptions(), os)));
  EXPECT_NE(text.find("// kernel module "), std::string::npos);
  EXPECT_NE(text.find(".visible .entry"), std::string::npos);
}

TEST(EmitPtx, UnknownFunctionIsADiagnostic) {
  mlir::MLIRContext ctx;
  registerFrontendDialects(ctx);
  auto module = mlir::ModuleOp::create(mlir::UnknownLoc::get(&ctx));
  std::string message;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    message = d.str();
    return mlir::success();
  });
  EXPECT_TRUE(mlir::failed(compileForCuda(module, "nope", CudaOptions())));
  EXPECT_NE(message.find("no function @nope"), std::string::npos) << message;
  module->erase();
}

} // namespace

//===- MlirFuzzer.cpp - libFuzzer target for .mlir input of the kc dialect ===//
//
// Parses arbitrary bytes as MLIR with the kc dialect and every upstream
// dialect registered (as kcc-opt does) and verifies what parses: the kc
// attribute and type parsers, custom assembly and op verifiers are the
// instrumented code. Diagnostics are swallowed; a crash or a sanitizer
// report is a bug.
//
//===----------------------------------------------------------------------===//

#include "ir/KcAttributes.h"
#include "ir/KcDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"

#include <memory>
#include <string>

namespace {
/// Uniqued attributes and types live as long as their context: a fresh one
/// every so many inputs keeps a long run's memory flat.
constexpr int kInputsPerContext = 2000;

mlir::MLIRContext &context() {
  static std::unique_ptr<mlir::MLIRContext> ctx;
  static int uses = 0;
  if (!ctx || ++uses == kInputsPerContext) {
    mlir::DialectRegistry registry;
    mlir::registerAllDialects(registry);
    registry.insert<kcc::kc::KcDialect>();
    ctx = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    ctx->loadDialect<kcc::kc::KcDialect>();
    uses = 0;
  }
  return *ctx;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The lexer reads one byte past the end: give it a NUL terminator.
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::MLIRContext &ctx = context();
  mlir::ScopedDiagnosticHandler quiet(
      &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(
          text, mlir::ParserConfig(&ctx, /*verifyAfterParse=*/false),
          "fuzz.mlir");
  // As kcc reads .mlir input (tools/kcc/Compile.cpp).
  if (module && mlir::succeeded(kcc::kc::checkDenseArrayStorage(*module)))
    (void)mlir::verify(*module);
  return 0;
}

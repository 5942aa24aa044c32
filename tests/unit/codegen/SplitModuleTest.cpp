//===- SplitModuleTest.cpp - A module in parts that compile apart ---------===//
//
// aot::splitModule on a module of an entry and many internal functions, some
// calling each other: each body lands in exactly one part, the parts differ
// by at most one function's weight, a function called from another part is
// external and hidden there and declared where it is called, one called only
// within its part stays internal, and each part verifies and compiles to an
// object. Functions marked cold go to cold parts, and only they.
//
//===----------------------------------------------------------------------===//

#include "codegen/aot/SplitModule.h"
#include "codegen/Passes.h"
#include "codegen/aot/AotCompiler.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

#include <string>

using namespace kcc;

namespace {

constexpr int kFunctions = 12;
/// Ops per function: the module is several parts' worth.
constexpr int kChain = aot::kOpsPerPart / 3;

/// @entry calls @f0..@f11; @f<i> (odd i) also calls @f<i-1>. Each @f<i> is
/// a chain of kChain adds, bigger for lower i.
std::string moduleText() {
  std::string s = "module {\n";
  for (int f = 0; f < kFunctions; ++f) {
    int length = kChain + (kFunctions - f) * 100;
    s += "  llvm.func internal @f" + std::to_string(f) +
         "(%a: i64) -> i64 {\n    %v0 = llvm.add %a, %a : i64\n";
    for (int i = 1; i < length; ++i)
      s += "    %v" + std::to_string(i) + " = llvm.add %v" +
           std::to_string(i - 1) + ", %a : i64\n";
    std::string last = "%v" + std::to_string(length - 1);
    if (f % 2 == 1) {
      s += "    %c = llvm.call @f" + std::to_string(f - 1) + "(" + last +
           ") : (i64) -> i64\n";
      last = "%c";
    }
    s += "    llvm.return " + last + " : i64\n  }\n";
  }
  s += "  llvm.func @entry(%a: i64) -> i64 {\n";
  std::string acc = "%a";
  for (int f = 0; f < kFunctions; ++f) {
    s += "    %r" + std::to_string(f) + " = llvm.call @f" + std::to_string(f) +
         "(" + acc + ") : (i64) -> i64\n";
    acc = "%r" + std::to_string(f);
  }
  s += "    llvm.return " + acc + " : i64\n  }\n}\n";
  return s;
}

TEST(SplitModule, EachBodyOnceCallsAcrossPartsHidden) {
  mlir::DialectRegistry registry;
  registerCodegenInterfaces(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadDialect<mlir::LLVM::LLVMDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(moduleText(), &ctx);
  ASSERT_TRUE(module);

  auto parts = aot::splitModule(*module);
  ASSERT_GE(parts.size(), 2u);
  ASSERT_LE(parts.size(), static_cast<size_t>(aot::kMaxParts));

  llvm::StringMap<unsigned> definedIn;
  std::vector<int64_t> weight(parts.size(), 0);
  int64_t biggest = 0;
  for (auto [index, part] : llvm::enumerate(parts)) {
    ASSERT_TRUE(mlir::succeeded(mlir::verify(*part))) << "part " << index;
    for (auto f : part->getOps<mlir::LLVM::LLVMFuncOp>()) {
      if (f.isExternal())
        continue;
      EXPECT_TRUE(definedIn.try_emplace(f.getSymName(), index).second)
          << "@" << f.getSymName().str() << " defined twice";
      int64_t ops = 0;
      f.walk([&](mlir::Operation *) { ++ops; });
      weight[index] += ops;
      biggest = std::max(biggest, ops);
    }
  }
  EXPECT_EQ(definedIn.size(), static_cast<size_t>(kFunctions + 1));
  int64_t lightest = *std::min_element(weight.begin(), weight.end());
  int64_t heaviest = *std::max_element(weight.begin(), weight.end());
  // Longest first into the lightest: the last function the heaviest part
  // took went to the lightest part of the time.
  EXPECT_LE(heaviest - lightest, biggest) << "parts far from equal";

  // A function is local where defined iff no other part calls it, and each
  // call has a definition or a declaration in its part.
  unsigned entryPart = definedIn.lookup("entry");
  for (int f = 0; f < kFunctions; ++f) {
    std::string name = "f" + std::to_string(f);
    unsigned home = definedIn.lookup(name);
    bool calledAcross = home != entryPart;
    if (f % 2 == 0 && f + 1 < kFunctions)
      calledAcross |= definedIn.lookup("f" + std::to_string(f + 1)) != home;
    auto def = parts[home]->lookupSymbol<mlir::LLVM::LLVMFuncOp>(name);
    ASSERT_TRUE(def);
    EXPECT_EQ(def.getLinkage() == mlir::LLVM::Linkage::Internal, !calledAcross)
        << "@" << name;
    if (calledAcross)
      EXPECT_EQ(def.getVisibility_(), mlir::LLVM::Visibility::Hidden)
          << "@" << name;
    for (auto [index, part] : llvm::enumerate(parts)) {
      part->walk([&](mlir::LLVM::CallOp call) {
        if (call.getCallee() == name)
          EXPECT_TRUE(part->lookupSymbol(name))
              << "@" << name << " called in part " << index
              << " without a declaration";
      });
    }
  }

  // Each part alone is a module LLVM compiles.
  aot::TargetOptions target;
  auto translated = aot::translateInParts(*module, target);
  ASSERT_TRUE(static_cast<bool>(translated))
      << llvm::toString(translated.takeError());
  EXPECT_EQ(translated->size(), parts.size());
  auto objects = aot::optimizeAndEmitParts(*translated, target);
  ASSERT_TRUE(static_cast<bool>(objects))
      << llvm::toString(objects.takeError());
  ASSERT_EQ(objects->size(), parts.size());
  for (const std::string &object : *objects)
    EXPECT_EQ(object.substr(0, 4), "\x7f"
                                   "ELF");
}

TEST(SplitModule, ColdFunctionsInColdPartsOfTheirOwn) {
  mlir::DialectRegistry registry;
  registerCodegenInterfaces(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadDialect<mlir::LLVM::LLVMDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(moduleText(), &ctx);
  ASSERT_TRUE(module);
  // The even functions are cold (as kc-mark-cold-functions marks them).
  auto isCold = [](llvm::StringRef name) {
    return name.starts_with("f") && std::stoi(name.drop_front().str()) % 2 == 0;
  };
  module->walk([&](mlir::LLVM::LLVMFuncOp f) {
    if (isCold(f.getSymName()))
      f->setAttr(aot::kColdAttrName, mlir::UnitAttr::get(&ctx));
  });

  auto parts = aot::splitModule(*module);
  ASSERT_GE(parts.size(), 2u);
  unsigned coldParts = 0, bodies = 0;
  for (auto [index, part] : llvm::enumerate(parts)) {
    bool coldPart = (*part)->hasAttr(aot::kColdAttrName);
    coldParts += coldPart;
    for (auto f : part->getOps<mlir::LLVM::LLVMFuncOp>()) {
      EXPECT_FALSE(f->hasAttr(aot::kColdAttrName))
          << "@" << f.getSymName().str();
      if (f.isExternal())
        continue;
      ++bodies;
      EXPECT_EQ(isCold(f.getSymName()), coldPart)
          << "@" << f.getSymName().str() << " in part " << index;
    }
  }
  EXPECT_EQ(bodies, static_cast<unsigned>(kFunctions + 1));
  EXPECT_GE(coldParts, 1u);
  EXPECT_LT(coldParts, parts.size());

  aot::TargetOptions target;
  auto translated = aot::translateInParts(*module, target);
  ASSERT_TRUE(static_cast<bool>(translated))
      << llvm::toString(translated.takeError());
  ASSERT_EQ(translated->size(), parts.size());
  for (auto [index, part] : llvm::enumerate(*translated))
    EXPECT_EQ(part.cold, (*parts[index])->hasAttr(aot::kColdAttrName));
  auto objects = aot::optimizeAndEmitParts(*translated, target);
  ASSERT_TRUE(static_cast<bool>(objects))
      << llvm::toString(objects.takeError());
  for (const std::string &object : *objects)
    EXPECT_EQ(object.substr(0, 4), "\x7f"
                                   "ELF");
}

TEST(SplitModule, SmallModulesStayWhole) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<mlir::LLVM::LLVMDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
module {
  llvm.func internal @f(%a: i64) -> i64 {
    %0 = llvm.add %a, %a : i64
    llvm.return %0 : i64
  }
  llvm.func @entry(%a: i64) -> i64 {
    %0 = llvm.call @f(%a) : (i64) -> i64
    llvm.return %0 : i64
  }
}
)mlir",
                                              &ctx);
  ASSERT_TRUE(module);
  auto parts = aot::splitModule(*module);
  ASSERT_EQ(parts.size(), 1u);
  auto f = parts[0]->lookupSymbol<mlir::LLVM::LLVMFuncOp>("f");
  ASSERT_TRUE(f);
  EXPECT_EQ(f.getLinkage(), mlir::LLVM::Linkage::Internal);
}

} // namespace

//===- FusionReport.cpp - kcc --fusion-report -----------------------------===//
//
// Each remark of kc-fuse-elementwise, kc-fuse-epilogues, kc-fuse-loops,
// kc-plan-memory and kc-count-kernels becomes one line, under the function
// it belongs to, in five sections. A remark's location names the layers it
// came from (the importer names every op after its Keras layer). A step
// with bf16 tensors gets a sixth, first: where it computes in bf16.
//
//===----------------------------------------------------------------------===//

#include "FusionReport.h"

#include "codegen/Passes.h"
#include "ir/KcAttributes.h"
#include "ir/KcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace kcc;

namespace {

/// The layer names in `loc` ("dense_1, loss"), or "-" when it has none.
std::string layersOf(Location loc) {
  llvm::SetVector<StringRef> names;
  loc->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l))
      names.insert(name.getName().strref());
    return WalkResult::advance();
  });
  if (names.empty())
    return "-";
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(names, os);
  return s;
}

/// The function a remark's location is in is not known from the remark;
/// the report lists remarks in pipeline order, which runs function by
/// function within each pass, so sections are per pass.
struct Section {
  const char *title;
  std::vector<std::string> lines;
};

bool isBF16(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  return tensor && tensor.getElementType().isBF16();
}

/// Where a mixed-precision step computes in bf16, per layer, from its kc
/// ops: the products oneDNN runs in bf16, the ops kc-widen-bf16 computes in
/// f32 between bf16 tensors, and the products that stay f32 because their
/// layer computes in float32. Empty when the step holds no bf16.
Section mixedPrecision(func::FuncOp f) {
  Section section{"mixed precision (bf16 products on oneDNN, f32 compute "
                  "elsewhere: kc-widen-bf16)",
                  {}};
  bool any = false;
  f.walk([&](Operation *op) {
    any = any || llvm::any_of(op->getResultTypes(), isBF16);
  });
  if (!any)
    return section;
  llvm::StringMap<std::array<int64_t, 3>> perLayer;
  std::vector<std::string> order;
  f.walk([&](Operation *op) {
    if (!isa<kc::KcDialect>(op->getDialect()) || isa<kc::CastOp>(op))
      return;
    bool product =
        isa<kc::MatmulOp, kc::BatchMatmulOp, kc::Conv2DOp,
            kc::Conv2DBackpropInputOp, kc::Conv2DBackpropFilterOp>(op);
    bool bf16 = llvm::any_of(op->getOperandTypes(), isBF16) ||
                llvm::any_of(op->getResultTypes(), isBF16);
    int kind = product ? (bf16 ? 0 : 2) : (bf16 ? 1 : -1);
    if (kind < 0 || isa<kc::ReshapeOp>(op))
      return;
    std::string layer = layersOf(op->getLoc());
    auto [it, inserted] = perLayer.try_emplace(layer, std::array<int64_t, 3>{});
    if (inserted)
      order.push_back(layer);
    ++it->second[kind];
  });
  for (const std::string &layer : order) {
    auto [bf16Products, widened, f32Products] = perLayer.lookup(layer);
    std::string line = "[" + layer + "]";
    if (bf16Products)
      line += " " + std::to_string(bf16Products) + " bf16 products;";
    if (widened)
      line += " " + std::to_string(widened) + " ops in f32 on bf16 tensors;";
    if (f32Products)
      line += " " + std::to_string(f32Products) +
              " f32 products (the layer computes in float32);";
    line.pop_back();
    section.lines.push_back(line);
  }
  return section;
}

} // namespace

LogicalResult kcc::driver::printFusionReport(ModuleOp module,
                                             const CpuOptions &cpu,
                                             llvm::raw_ostream &os) {
  OwningOpRef<ModuleOp> copy = module.clone();
  // The training step is what runs every step; the forward alone (for
  // predict) is reported only when there is no step.
  StringRef reported = "forward";
  copy->walk([&](func::FuncOp f) {
    if (f.getSymName().ends_with("train_step"))
      reported = f.getSymName();
  });
  for (auto f : llvm::make_early_inc_range(copy->getOps<func::FuncOp>()))
    if (!f.isExternal() && !f.getSymName().ends_with(reported))
      f.erase();
  std::string reportedName = reported.str();
  // Elementwise fusions, summed per layer: (fusions, bytes).
  llvm::StringMap<std::pair<int64_t, int64_t>> perLayer;
  std::vector<std::string> layerOrder;
  Section elementwise{"elementwise fusion (kc-fuse-elementwise): values "
                      "never written to memory",
                      {}};
  Section epilogues{"library-call epilogues (kc-fuse-epilogues)", {}};
  Section groups{"fusion groups (kc-fuse-loops): loop nests sharing one "
                 "loop, one kernel each",
                 {}};
  Section refused{"refused fusions, with the reason", {}};
  Section plan{"memory plan (kc-plan-memory) and kernel count", {}};
  auto reportedFunc = copy->lookupSymbol<func::FuncOp>(reported);
  Section mixed = reportedFunc ? mixedPrecision(reportedFunc)
                               : Section{"mixed precision", {}};
  std::string errors;
  {
    ScopedDiagnosticHandler handler(
        copy->getContext(), [&](Diagnostic &d) -> LogicalResult {
          std::string msg = d.str();
          if (d.getSeverity() != DiagnosticSeverity::Remark) {
            errors += msg + "\n";
            return success();
          }
          std::string line = "[" + layersOf(d.getLocation()) + "] " + msg;
          StringRef m(msg);
          if (m.starts_with("elementwise fusion")) {
            std::string layer = layersOf(d.getLocation());
            size_t end = m.rfind(" B never");
            size_t start = m.rfind(' ', end - 1);
            int64_t bytes = 0;
            if (end != StringRef::npos && start != StringRef::npos)
              m.slice(start + 1, end).getAsInteger(10, bytes);
            auto [it, inserted] = perLayer.try_emplace(layer, 0, 0);
            if (inserted)
              layerOrder.push_back(layer);
            it->second.first += 1;
            it->second.second += bytes;
          } else if (m.starts_with("fused into"))
            epilogues.lines.push_back(line);
          else if (m.starts_with("fusion group"))
            groups.lines.push_back(line);
          else if (m.starts_with("not fused"))
            refused.lines.push_back(line);
          else
            plan.lines.push_back(msg);
          return success();
        });
    CpuOptions reporting = cpu;
    reporting.pipeline->remarks = true;
    if (failed(lowerForCpu(*copy, reporting))) {
      llvm::errs() << errors;
      return failure();
    }
  }
  copy->walk([&](Operation *f) {
    if (std::optional<ArrayRef<int64_t>> pairs = kc::getInPlacePairs(f))
      if (!pairs->empty())
        plan.lines.push_back(
            std::to_string(pairs->size() / 2) +
            " results (parameters, optimizer slots, the step counter) "
            "updated in place over their arguments (kc-mark-in-place)");
  });
  int64_t total = 0;
  for (const std::string &layer : layerOrder) {
    auto [count, bytes] = perLayer.lookup(layer);
    total += bytes;
    elementwise.lines.push_back("[" + layer + "] " + std::to_string(count) +
                                " producers fused, " + std::to_string(bytes) +
                                " B never written");
  }
  if (total)
    elementwise.lines.push_back("total: " + std::to_string(total) +
                                " B never written per step");
  os << "kcc fusion report: @" << reportedName << "\n";
  std::vector<Section *> sections = {&elementwise, &epilogues, &groups,
                                     &refused, &plan};
  if (!mixed.lines.empty())
    sections.insert(sections.begin(), &mixed);
  for (Section *s : sections) {
    os << "\n" << s->title << ": " << s->lines.size() << "\n";
    for (const std::string &line : s->lines)
      os << "  " << line << "\n";
  }
  return success();
}

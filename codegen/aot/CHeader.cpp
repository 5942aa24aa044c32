//===- CHeader.cpp - The C header of an AOT-compiled module ---------------===//

#include "codegen/aot/CHeader.h"

#include "codegen/memory/MemoryPlan.h"
#include "ir/KcAttributes.h"
#include "passes/TrainStep.h"
#include "runtime/MemoryBudget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace kcc;

namespace {

constexpr int64_t kMaxRank = 8;

/// The C type and kcc_dtype enumerator of an element type.
struct CType {
  const char *type, *dtype;
};

std::optional<CType> cTypeOf(mlir::Type t) {
  if (t.isF32())
    return CType{"float", "KCC_F32"};
  if (t.isF64())
    return CType{"double", "KCC_F64"};
  if (t.isF16())
    return CType{"uint16_t", "KCC_F16"};
  if (t.isBF16())
    return CType{"uint16_t", "KCC_BF16"};
  if (t.isInteger(1))
    return CType{"uint8_t", "KCC_I1"};
  if (t.isInteger(32))
    return CType{"int32_t", "KCC_I32"};
  if (t.isInteger(64))
    return CType{"int64_t", "KCC_I64"};
  return std::nullopt;
}

/// One argument or result as the header shows it.
struct Slot {
  std::string name;
  mlir::RankedTensorType type;
  CType c;
  /// Checked sizes (runtime/MemoryBudget.h).
  int64_t numel, bytes;
};

llvm::Error slotError(mlir::func::FuncOp f, llvm::StringRef what, unsigned i,
                      mlir::Type t, llvm::StringRef why) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "@" << f.getSymName() << ": " << what << " #" << i << " of type " << t
     << " " << why;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), s);
}

llvm::Expected<std::vector<Slot>> slotsOf(mlir::func::FuncOp f, bool results) {
  std::vector<Slot> slots;
  mlir::TypeRange types = results ? f.getResultTypes() : f.getArgumentTypes();
  for (auto [i, t] : llvm::enumerate(types)) {
    const char *what = results ? "result" : "argument";
    auto rt = llvm::dyn_cast<mlir::RankedTensorType>(t);
    if (!rt || !rt.hasStaticShape())
      return slotError(f, what, i, t, "is not a statically shaped tensor");
    if (rt.getRank() > kMaxRank)
      return slotError(f, what, i, t, "has a rank above 8");
    std::optional<CType> c = cTypeOf(rt.getElementType());
    if (!c)
      return slotError(f, what, i, t, "has no C element type");
    // Checked: a wrapped count would declare a 0-byte or negative buffer.
    unsigned bits = rt.getElementType().getIntOrFloatBitWidth();
    std::string elementName;
    llvm::raw_string_ostream(elementName) << rt.getElementType();
    TensorSize size = tensorSize(rt.getShape().data(), rt.getRank(),
                                 std::max(1u, bits / 8), elementName);
    if (!size)
      return slotError(f, what, i, t, "cannot be described: " + size.error);
    std::string name;
    std::optional<llvm::StringRef> given =
        results ? kc::getResultName(f, i) : kc::getArgName(f, i);
    std::optional<int64_t> input;
    if (!results)
      input = kc::getInputIndex(f, i);
    if (given)
      name = given->str();
    else if (input)
      name = "input_" + std::to_string(*input);
    else if (!results && kc::isStepArg(f, i))
      name = "step";
    else
      name = (results ? "result" : "arg") + std::to_string(i);
    slots.push_back({name, rt, *c, size.elements, size.bytes});
  }
  return slots;
}

std::string shapeText(mlir::RankedTensorType t) {
  std::string s;
  for (int64_t d : t.getShape())
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

/// A C string literal (kc.name values are plain, but be safe).
std::string quoted(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out + "\"";
}

/// A comment that cannot end early.
std::string commentSafe(llvm::StringRef s) {
  std::string out = s.str();
  for (size_t p; (p = out.find("*/")) != std::string::npos;)
    out.replace(p, 2, "*_/");
  return out;
}

void emitTable(llvm::raw_ostream &os, llvm::StringRef name,
               const std::vector<Slot> &slots) {
  os << "static const kcc_tensor_desc " << name << "["
     << std::max<size_t>(1, slots.size()) << "] = {\n";
  for (const Slot &s : slots) {
    os << "    {" << quoted(s.name) << ", " << s.c.dtype << ", "
       << s.type.getRank() << ", {";
    llvm::interleaveComma(s.type.getShape(), os);
    os << "}, " << s.numel << ", " << s.bytes << "},\n";
  }
  if (slots.empty())
    os << "    {0, KCC_F32, 0, {0}, 0, 0},\n";
  os << "};\n";
}

void emitTrainStepLayout(llvm::raw_ostream &os, llvm::StringRef m,
                         const TrainStepLayout &l) {
  os << "/* @train_step layout (its kc.train_step attribute): loss "
     << commentSafe(l.loss) << ", optimizer " << commentSafe(l.optimizer)
     << ". */\n";
  auto def = [&](llvm::StringRef name, int64_t value) {
    os << "#define " << m << name << " " << value << "\n";
  };
  def("NUM_PARAMS", l.numParams);
  def("NUM_OPTIMIZER_STATE", l.numOptimizerState);
  def("NUM_INPUTS", l.numInputs);
  def("NUM_METRICS", l.metrics.size());
  def("ARG_FIRST_PARAM", 0);
  def("ARG_FIRST_OPTIMIZER_STATE", l.numParams);
  def("ARG_ITERATIONS", l.iterationsArg());
  def("ARG_LEARNING_RATE", l.learningRateArg());
  def("ARG_FIRST_INPUT", l.firstInputArg());
  def("ARG_TARGET", l.targetArg());
  def("RESULT_LOSS", l.lossResult());
  def("RESULT_FIRST_METRIC", l.firstMetricResult());
  def("RESULT_FIRST_PARAM", l.firstParamResult());
  def("RESULT_FIRST_OPTIMIZER_STATE", l.firstStateResult());
  def("RESULT_ITERATIONS", l.iterationsResult());
  for (size_t i = 0; i < l.statistics.size(); ++i)
    if (!l.statistics[i].empty())
      os << "/* Result " << l.firstMetricResult() + i << " ("
         << commentSafe(l.metrics[i]) << ") holds the batch's statistics of "
         << commentSafe(l.statistics[i])
         << ", not its value: sum them over the epoch, then apply Keras's "
            "result() (kcc's metricResult, config/MetricConfig.h). */\n";
}

/// How the lowered function differs from its kc signature: a trailing
/// arena argument (kc-plan-memory arena-arg) and results written over
/// their arguments (kc-mark-in-place apply).
struct LoweredAbi {
  int64_t arenaBytes = 0;
  std::vector<std::pair<int64_t, int64_t>> inPlace;
};

LoweredAbi loweredAbi(mlir::ModuleOp lowered, llvm::StringRef name) {
  LoweredAbi abi;
  mlir::Operation *f = lowered.lookupSymbol(name);
  if (!f)
    return abi;
  if (auto fn = llvm::dyn_cast<mlir::FunctionOpInterface>(f))
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      if (kc::isArenaArg(fn, i))
        if (std::optional<MemoryPlanReport> plan = readMemoryPlan(f))
          abi.arenaBytes = std::max<int64_t>(1, plan->arenaBytes);
  if (std::optional<llvm::ArrayRef<int64_t>> pairs = kc::getInPlacePairs(f))
    for (size_t i = 0; i + 1 < pairs->size(); i += 2)
      abi.inPlace.emplace_back((*pairs)[i], (*pairs)[i + 1]);
  return abi;
}

llvm::Error emitFunction(llvm::raw_ostream &os, mlir::func::FuncOp f,
                         const LoweredAbi &abi) {
  auto args = slotsOf(f, /*results=*/false);
  if (!args)
    return args.takeError();
  auto results = slotsOf(f, /*results=*/true);
  if (!results)
    return results.takeError();
  std::string fn = f.getSymName().str();
  // The symbol carries any --prefix already: mlp_train_step -> MLP_TRAIN_STEP_.
  std::string m = aot::toMacroName(f.getSymName()) + "_";

  os << "/* ---- @" << fn << " ---- */\n";
  os << "#define " << m << "NUM_ARGS " << args->size() << "\n";
  os << "#define " << m << "NUM_RESULTS " << results->size() << "\n";
  if (auto layout = getTrainStepLayout(f))
    emitTrainStepLayout(os, m, *layout);
  emitTable(os, fn + "_args", *args);
  emitTable(os, fn + "_results", *results);
  os << "/* Scratch memory of one call (0: none): pass a 64-byte aligned\n"
        " * buffer of this size as `arena`; calls must not share one at once. "
        "*/\n"
     << "#define " << m << "ARENA_BYTES " << abi.arenaBytes << "\n";
  os << "/* Results written over an argument: {result, argument}. The result\n"
        " * pointer passed for one is not written; pass the argument's. */\n"
     << "#define " << m << "NUM_IN_PLACE " << abi.inPlace.size() << "\n"
     << "static const int32_t " << fn << "_in_place["
     << std::max<size_t>(1, abi.inPlace.size()) << "][2] = {";
  for (auto [k, pair] : llvm::enumerate(abi.inPlace))
    os << (k ? ", " : "") << "{" << pair.first << ", " << pair.second << "}";
  if (abi.inPlace.empty())
    os << "{-1, -1}";
  os << "};\n";

  os << "\nvoid " << fn << "(";
  bool arena = abi.arenaBytes > 0;
  size_t total = args->size() + results->size() + arena, k = 0;
  auto param = [&](const Slot &s, bool isResult, size_t index) {
    os << "\n    " << (isResult ? "" : "const ") << s.c.type << " *"
       << (isResult ? "res" : "arg") << index << (++k < total ? "," : "")
       << " /* " << commentSafe(s.name) << ": "
       << mlir::cast<mlir::RankedTensorType>(s.type).getElementType() << "["
       << shapeText(s.type) << "] */";
  };
  for (auto [i, s] : llvm::enumerate(*args))
    param(s, false, i);
  for (auto [i, s] : llvm::enumerate(*results))
    param(s, true, i);
  if (arena)
    os << "\n    void *arena /* " << m << "ARENA_BYTES */";
  if (total == 0)
    os << "void";
  os << ");\n\n";

  os << "/* @" << fn << " from pointer arrays: args[" << m
     << "NUM_ARGS], results[" << m << "NUM_RESULTS], the arena. */\n";
  os << "static inline void " << fn
     << "_packed(void *const *args, void *const *results, void *arena) {\n  "
     << fn << "(";
  k = 0;
  for (auto [i, s] : llvm::enumerate(*args))
    os << (k++ ? ", " : "") << "(const " << s.c.type << " *)args[" << i << "]";
  for (auto [i, s] : llvm::enumerate(*results))
    os << (k++ ? ", " : "") << "(" << s.c.type << " *)results[" << i << "]";
  if (arena)
    os << (k++ ? ", " : "") << "arena";
  os << ");\n";
  if (args->empty())
    os << "  (void)args;\n";
  if (results->empty())
    os << "  (void)results;\n";
  if (!arena)
    os << "  (void)arena;\n";
  os << "}\n\n";
  return llvm::Error::success();
}

} // namespace

std::string aot::toMacroName(llvm::StringRef name) {
  std::string out;
  for (char c : llvm::sys::path::filename(name))
    out += llvm::isAlnum(c) ? llvm::toUpper(c) : '_';
  if (out.empty() || llvm::isDigit(out[0]))
    out = "_" + out;
  return out;
}

llvm::Expected<std::string> aot::emitCHeader(mlir::ModuleOp module,
                                             mlir::ModuleOp lowered,
                                             const HeaderOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "/* Generated by kcc " KCC_VERSION " from "
     << commentSafe(options.source) << ". Do not edit.\n"
     << " *\n"
     << " * ABI: void fn(args..., results... [, arena]). One bare pointer per\n"
     << " * argument, in the kc function's order, then one per result; each "
        "points\n"
     << " * to a dense, row-major array of the listed element type and shape\n"
     << " * (rank 0: one element). Element alignment suffices, 64 bytes is "
        "best.\n"
     << " * Results go to caller-provided buffers that must not alias an "
        "argument,\n"
     << " * except those listed in fn_in_place, which the call writes over "
        "their\n"
     << " * argument; other arguments are only read. A function with scratch\n"
     << " * memory takes it last (fn ARENA_BYTES). This is the code the JIT "
        "runs.\n"
     << " * Link with the kcc runtime: KCCLibraryCalls and KCCKernels\n"
     << " * (and their oneDNN, libgomp), libm, and LLVM's libomp after "
        "libgomp\n"
     << " * when the code has parallel loops (__kmpc_*). Names in comments "
        "are\n"
     << " * kc.name.\n"
     << " */\n"
     << "#ifndef " << options.guard << "\n#define " << options.guard << "\n\n"
     << "#include <stdint.h>\n\n"
     << "#ifndef KCC_AOT_ABI_V1\n#define KCC_AOT_ABI_V1\n"
     << "enum kcc_dtype { KCC_F32, KCC_F64, KCC_F16, KCC_BF16, KCC_I1, "
        "KCC_I32, "
        "KCC_I64 };\n"
     << "/* One argument or result: kc.name, element type, shape, sizes. */\n"
     << "typedef struct kcc_tensor_desc {\n"
     << "  const char *name;\n  enum kcc_dtype dtype;\n  int32_t rank;\n"
     << "  int64_t shape[" << kMaxRank << "];\n  int64_t numel;\n"
     << "  int64_t bytes;\n} kcc_tensor_desc;\n#endif\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  if (options.learningRate)
    os << "/* The learning rate kcc was given (@train_step takes it as an "
          "argument). */\n#define "
       << options.macroPrefix << "LEARNING_RATE " << *options.learningRate
       << "\n\n";
  for (auto f : module.getOps<mlir::func::FuncOp>())
    if (f.isPublic() && !f.isExternal())
      if (llvm::Error err =
              emitFunction(os, f, loweredAbi(lowered, f.getSymName())))
        return err;
  os << "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n#endif /* "
     << options.guard << " */\n";
  return text;
}

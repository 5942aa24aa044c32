//===- KcDialect.cpp - kc dialect registration ----------------------------===//
//
// The dialect's registration and the verifier of its kc.* discardable
// attributes.
//
//===----------------------------------------------------------------------===//

#include "ir/KcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kcc::kc;

#include "ir/KcDialect.cpp.inc"
#include "ir/KcEnums.cpp.inc"
#include "ir/KcInterfaces.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "ir/KcAttrs.cpp.inc"

void KcDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/KcAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "ir/KcOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// The kc.* discardable attributes
//===----------------------------------------------------------------------===//
//
// KcBase.td declares each attribute's name and type; the rules below add
// where it may appear and what a well-formed value is, so a malformed or
// misspelled kc.* attribute is caught when the IR is verified, not by a pass
// that silently reads it as absent.

namespace {

/// Where a kc.* attribute may appear.
enum Site : unsigned {
  OnArg = 1 << 0,
  OnResult = 1 << 1,
  OnFunction = 1 << 2,
  OnLoop = 1 << 3,
  OnCast = 1 << 4,
};

using EmitErrorFn = llvm::function_ref<InFlightDiagnostic()>;
using ValueCheck = LogicalResult (*)(Attribute, StringRef name, EmitErrorFn);

/// How one attribute is verified.
struct AttrRule {
  StringLiteral name;
  unsigned sites;
  /// Whether the attribute has the type KcBase.td declares.
  bool (*hasType)(Attribute);
  /// That type, for diagnostics ("a string attribute").
  StringLiteral expected;
  /// What a value of that type must further satisfy; null when anything goes.
  ValueCheck checkValue;
};

/// The attribute class a generated helper reads (its getAttr's return type).
template <typename Helper>
using AttrTypeOf = decltype(std::declval<Helper>().getAttr(nullptr));

template <typename Helper>
AttrRule rule(unsigned sites, StringLiteral expected,
              ValueCheck checkValue = nullptr) {
  return {Helper::getNameStr(), sites,
          [](Attribute attr) { return isa<AttrTypeOf<Helper>>(attr); },
          expected, checkValue};
}

/// Indices and counts: an integer (not a bool, which is an i1 IntegerAttr)
/// that is not negative.
LogicalResult checkNonNegative(Attribute attr, StringRef name,
                               EmitErrorFn emitError) {
  auto value = cast<IntegerAttr>(attr);
  if (value.getType().isInteger(1) || value.getValue().isNegative())
    return emitError() << "'" << name
                       << "' expects a non-negative integer attribute, got "
                       << attr;
  return success();
}

/// (result, argument) pairs, flattened.
LogicalResult checkPairs(Attribute attr, StringRef name,
                         EmitErrorFn emitError) {
  ArrayRef<int64_t> pairs = cast<DenseI64ArrayAttr>(attr).asArrayRef();
  if (pairs.size() % 2 != 0)
    return emitError() << "'" << name
                       << "' expects (result, argument) pairs (an even "
                          "number of indices), got "
                       << attr;
  if (llvm::any_of(pairs, [](int64_t i) { return i < 0; }))
    return emitError() << "'" << name << "' expects non-negative indices, got "
                       << attr;
  return success();
}

/// One field of a dictionary-valued attribute.
struct Field {
  enum Kind { Int, Bool, String, Strings } kind;
  StringLiteral name;
  bool required = true;
};

LogicalResult checkFields(DictionaryAttr dict, StringRef name,
                          ArrayRef<Field> fields, EmitErrorFn emitError) {
  for (const Field &field : fields) {
    Attribute value = dict.get(field.name);
    if (!value) {
      if (!field.required)
        continue;
      return emitError() << "'" << name << "' expects a '" << field.name
                         << "' field, got " << dict;
    }
    bool ok = false;
    StringRef expected;
    switch (field.kind) {
    case Field::Int:
      ok = isa<IntegerAttr>(value) && !isa<BoolAttr>(value);
      expected = "an integer";
      break;
    case Field::Bool:
      ok = isa<BoolAttr>(value);
      expected = "a bool";
      break;
    case Field::String:
      ok = isa<StringAttr>(value);
      expected = "a string";
      break;
    case Field::Strings: {
      auto array = dyn_cast<ArrayAttr>(value);
      ok = array && llvm::all_of(array, llvm::IsaPred<StringAttr>);
      expected = "an array of strings";
      break;
    }
    }
    if (!ok)
      return emitError() << "'" << name << "' expects field '" << field.name
                         << "' to be " << expected << ", got " << value;
  }
  return success();
}

/// The fields getTrainStepLayout reads (from_logits is informational).
LogicalResult checkTrainStep(Attribute attr, StringRef name,
                             EmitErrorFn emitError) {
  return checkFields(cast<DictionaryAttr>(attr), name,
                     {{Field::String, "loss"},
                      {Field::Bool, "from_logits", /*required=*/false},
                      {Field::String, "optimizer"},
                      {Field::Int, "params"},
                      {Field::Int, "optimizer_state"},
                      {Field::Int, "inputs"},
                      {Field::Strings, "metrics"}},
                     emitError);
}

/// The fields kc-fuse-loops records for a fusion group.
LogicalResult checkFusion(Attribute attr, StringRef name,
                          EmitErrorFn emitError) {
  return checkFields(cast<DictionaryAttr>(attr), name,
                     {{Field::String, "kind"},
                      {Field::Int, "ops"},
                      {Field::Strings, "layers"},
                      {Field::Int, "local_bytes"}},
                     emitError);
}

/// Every kc.* attribute, in KcBase.td's order.
ArrayRef<AttrRule> attrRules() {
  using D = KcDialect;
  static const AttrRule rules[] = {
      rule<D::NameAttrHelper>(OnArg | OnResult, "a string attribute"),
      rule<D::TrainableAttrHelper>(OnArg, "a bool attribute"),
      rule<D::InputAttrHelper>(OnArg, "an integer attribute", checkNonNegative),
      rule<D::TargetAttrHelper>(OnArg, "an integer attribute",
                                checkNonNegative),
      rule<D::StepAttrHelper>(OnArg, "a unit attribute"),
      rule<D::ArenaAttrHelper>(OnArg, "a unit attribute"),
      rule<D::UpdatesAttrHelper>(OnResult, "an integer attribute",
                                 checkNonNegative),
      rule<D::AddedLossAttrHelper>(OnResult, "a unit attribute"),
      rule<D::OutputMaskAttrHelper>(OnResult, "an integer attribute",
                                    checkNonNegative),
      rule<D::TrainStepAttrHelper>(OnFunction, "a dictionary attribute",
                                   checkTrainStep),
      rule<D::NumInputsAttrHelper>(OnFunction, "an integer attribute",
                                   checkNonNegative),
      rule<D::UpdateCandidatesAttrHelper>(OnFunction, "a DenseI64ArrayAttr",
                                          checkPairs),
      rule<D::InPlaceAttrHelper>(OnFunction, "a DenseI64ArrayAttr", checkPairs),
      rule<D::KernelsAttrHelper>(OnFunction, "an integer attribute",
                                 checkNonNegative),
      rule<D::LibraryCallsAttrHelper>(OnFunction, "an integer attribute",
                                      checkNonNegative),
      rule<D::LoopNestsAttrHelper>(OnFunction, "an integer attribute",
                                   checkNonNegative),
      rule<D::ArenaBytesAttrHelper>(OnFunction, "an integer attribute",
                                    checkNonNegative),
      rule<D::ArenaLowerBoundAttrHelper>(OnFunction, "an integer attribute",
                                         checkNonNegative),
      rule<D::ArenaSumAttrHelper>(OnFunction, "an integer attribute",
                                  checkNonNegative),
      rule<D::ArenaBuffersAttrHelper>(OnFunction, "an integer attribute",
                                      checkNonNegative),
      rule<D::ColdAttrHelper>(OnFunction, "a unit attribute"),
      rule<D::FusionAttrHelper>(OnLoop, "a dictionary attribute", checkFusion),
      rule<D::ParallelAttrHelper>(OnLoop, "a unit attribute"),
      rule<D::PrecisionAttrHelper>(OnCast, "a string attribute"),
  };
  return rules;
}

/// The sites as words: "a function argument or result".
std::string describeSites(unsigned sites) {
  SmallVector<StringRef> words;
  if (sites & (OnArg | OnResult))
    words.push_back((sites & OnArg) && (sites & OnResult)
                        ? "a function argument or result"
                    : (sites & OnArg) ? "a function argument"
                                      : "a function result");
  if (sites & OnFunction)
    words.push_back("a function");
  if (sites & OnLoop)
    words.push_back("a loop");
  if (sites & OnCast)
    words.push_back("a kc.cast");
  return llvm::join(words, " or ");
}

/// Checks `attr`, found on `site`, against its rule.
LogicalResult verifyKcAttribute(NamedAttribute attr, Site site,
                                StringRef siteName, EmitErrorFn emitError) {
  StringRef name = attr.getName().getValue();
  ArrayRef<AttrRule> rules = attrRules();
  const AttrRule *found =
      llvm::find_if(rules, [&](const AttrRule &r) { return r.name == name; });
  if (found == rules.end()) {
    InFlightDiagnostic diag = emitError();
    diag << "unknown attribute '" << name << "'; the kc attributes are ";
    llvm::interleaveComma(rules, diag,
                          [&](const AttrRule &r) { diag << r.name; });
    return diag;
  }
  if (!(found->sites & site))
    return emitError() << "'" << name << "' is not allowed on " << siteName
                       << ", only on " << describeSites(found->sites);
  if (!found->hasType(attr.getValue()))
    return emitError() << "'" << name << "' expects " << found->expected
                       << ", got " << attr.getValue();
  if (found->checkValue)
    return found->checkValue(attr.getValue(), name, emitError);
  return success();
}

} // namespace

LogicalResult KcDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  bool isFunction = isa<FunctionOpInterface>(op);
  bool isLoop = !isFunction && isa<LoopLikeOpInterface>(op);
  Site site = isFunction        ? OnFunction
              : isLoop          ? OnLoop
              : isa<CastOp>(op) ? OnCast
                                : Site(0);
  std::string siteName = isFunction ? "a function"
                         : isLoop
                             ? "a loop"
                             : "'" + op->getName().getStringRef().str() + "'";
  return verifyKcAttribute(attr, site, siteName,
                           [&] { return op->emitOpError(); });
}

LogicalResult KcDialect::verifyRegionArgAttribute(Operation *op,
                                                  unsigned regionIndex,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  return verifyKcAttribute(attr, OnArg, "a function argument", [&] {
    return op->emitOpError() << "argument #" << argIndex << ": ";
  });
}

LogicalResult KcDialect::verifyRegionResultAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned resultIndex,
                                                     NamedAttribute attr) {
  return verifyKcAttribute(attr, OnResult, "a function result", [&] {
    return op->emitOpError() << "result #" << resultIndex << ": ";
  });
}

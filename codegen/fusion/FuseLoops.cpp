//===- FuseLoops.cpp - Consecutive loop nests into one kernel -------------===//
//
// kc-fuse-loops: after bufferization, what is left between two library calls
// is a run of small linalg ops (the softmax-cross-entropy and its gradient,
// a relu mask and its bias gradient, the optimizer update of every
// parameter). Each would be its own loop nest, a kernel with its own pass
// over memory and, when parallel, its own fork/join. This pass gives each
// run one loop (a fusion group), in one of two shapes:
//
// - rows: the ops share their outermost loop (the batch). One loop over it
//   runs every op's row in turn, so a row stays in cache from producer to
//   consumer. Legal when every buffer two of the ops share, one writing it,
//   is accessed at row i by iteration i only ("row-local"). Tiny ops of
//   another shape (an accumulator's fill, a scalar) run in the first
//   iteration when they read nothing the group wrote, else in the last; a
//   group with those, or with a reduction over the batch (a bias gradient),
//   is serial; one without runs its rows on all cores.
// - horizontal: independent elementwise ops of different shapes (the
//   optimizer's update of each parameter). One parallel loop over
//   fixed-size chunks of all of them; a chunk updates a slice of one
//   parameter.
//
// The cost rule: a group never turns a loop that would run on all cores
// into a serial one; ops that would are left to the next group, and with
// `remarks` the refusal is reported with its reason.
//
// Runs before kc-plan-memory, which then sees a group as one op: every
// buffer the group touches is live for the whole group, so no two of its
// buffers share arena bytes.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/lowering/LoweringUtils.h"
#include "ir/KcAttributes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "kc-fuse-loops"

STATISTIC(numGroups, "fusion groups formed");
STATISTIC(numGroupedOps, "linalg ops placed in fusion groups");

namespace kcc {
#define GEN_PASS_DEF_KCFUSELOOPS
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;
namespace kc = kcc::kc;

namespace {

/// Ops this small (iteration points) may join a group of another shape,
/// run once by one iteration.
constexpr int64_t kTinyOp = 4096;
/// The most loop nests one group holds. A group is one loop whose body
/// LLVM optimizes and schedules as a whole (its inner loops unrolled into
/// long blocks), in time that grows faster than the body; bounded groups
/// keep code generation linear in the model. The example models' largest
/// groups have 38 loop nests.
constexpr size_t kMaxGroupMembers = 64;
/// Elements per chunk of a horizontal group.
constexpr int64_t kChunk = 8192;

/// One buffer access of an op.
struct Access {
  Value root;      ///< the allocation or argument behind the operand
  bool write;      ///< an init (output) operand
  bool rowLocal;   ///< row i of the root touched at outer iteration i only
  bool contiguous; ///< identity map over the whole, unsliced root
  bool scalar;     ///< a 0-d operand
};

/// What the legality checks of one function need besides its ops.
struct FuseContext {
  /// Out-params a caller may alias with an argument (kc-mark-in-place), by
  /// the argument: the two are one buffer to every legality check here.
  DenseMap<Value, Value> inPlaceAliases;
  /// Iteration points from which a loop nest runs on an OpenMP team.
  int64_t parallelThreshold = 0;
};

/// The allocation or argument a memref value views, and whether a slice
/// (subview) is on the way.
Value traceRoot(const FuseContext &ctx, Value v, bool &sliced) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp,
            memref::ReinterpretCastOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    if (isa<memref::SubViewOp>(def)) {
      sliced = true;
      v = def->getOperand(0);
      continue;
    }
    break;
  }
  if (Value arg = ctx.inPlaceAliases.lookup(v))
    return arg;
  return v;
}

int64_t leadingExtent(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!t || t.getRank() == 0 || t.isDynamicDim(0))
    return -1;
  return t.getDimSize(0);
}

int64_t iterations(linalg::LinalgOp op) {
  int64_t n = 1;
  for (int64_t r : op.getStaticLoopRanges())
    n *= r;
  return n;
}

bool isStatic(linalg::LinalgOp op) {
  return llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic);
}

SmallVector<Access> accesses(const FuseContext &ctx, linalg::LinalgOp op,
                             int64_t rows) {
  SmallVector<Access> result;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  MLIRContext *mlirContext = op->getContext();
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      continue;
    bool sliced = false;
    Value root = traceRoot(ctx, operand.get(), sliced);
    AffineMap map = op.getMatchingIndexingMap(&operand);
    Access a;
    a.root = root;
    a.write = op.isDpsInit(&operand);
    a.scalar = type.getRank() == 0;
    a.rowLocal = !sliced && !ranges.empty() && ranges[0] == rows &&
                 map.getNumResults() > 0 &&
                 map.getResult(0) == getAffineDimExpr(0, mlirContext) &&
                 leadingExtent(operand.get()) == rows &&
                 leadingExtent(root) == rows;
    a.contiguous = !sliced && type.getLayout().isIdentity() &&
                   map.isIdentity() && type.getShape() == ArrayRef(ranges);
    result.push_back(a);
  }
  return result;
}

enum class Role { Row, First, Last, Chunked };

struct Member {
  linalg::LinalgOp op;
  Role role;
  SmallVector<Access> access;
};

/// Two access lists conflict when they share a root and one writes it.
bool conflict(ArrayRef<Access> a, ArrayRef<Access> b, bool requireRowLocal) {
  for (const Access &x : a)
    for (const Access &y : b)
      if (x.root == y.root && (x.write || y.write) &&
          !(requireRowLocal && x.rowLocal && y.rowLocal))
        return true;
  return false;
}

bool touchesRoot(ArrayRef<Access> a, ArrayRef<Access> b) {
  for (const Access &x : a)
    for (const Access &y : b)
      if (x.root == y.root && (x.write || y.write))
        return true;
  return false;
}

/// An elementwise op a horizontal group can slice: all-parallel, every
/// operand the whole iteration space or a 0-d scalar, no index reads.
bool isSliceable(linalg::LinalgOp op, ArrayRef<Access> access) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || op.getNumLoops() == 0 ||
      op.getNumLoops() != op.getNumParallelLoops() ||
      !generic.getBody()->getOps<linalg::IndexOp>().empty())
    return false;
  return llvm::all_of(access,
                      [](const Access &a) { return a.contiguous || a.scalar; });
}

struct Group {
  enum Kind { Rows, Horizontal } kind = Rows;
  int64_t rows = 0;
  bool parallel = true; ///< every iteration independent of the others
  int64_t work = 0;
  SmallVector<Member> members;

  bool hasRowMembers() const {
    return llvm::any_of(members, [](const Member &m) {
      return m.role == Role::Row || m.role == Role::Chunked;
    });
  }
};

bool tryHorizontal(const FuseContext &ctx, Group &g, linalg::LinalgOp op);

/// Why `op` cannot join `g`, or null after adding it.
const char *tryAdd(const FuseContext &ctx, Group &g, linalg::LinalgOp op) {
  const int64_t threshold = ctx.parallelThreshold;
  if (!isStatic(op))
    return "dynamic shape";
  if (g.members.size() >= kMaxGroupMembers)
    return "the group has the most loop nests one kernel may hold (64)";
  int64_t n = iterations(op);
  bool opParallel = n >= threshold && kcc::codegen::isOuterLoopIndependent(op);
  auto wouldSerialize = [&](bool stillParallel) {
    // A group large enough for a team must keep it, and so must an op
    // that would have one alone.
    return !stillParallel && g.work + n >= threshold &&
           ((g.parallel && g.work >= threshold) || opParallel);
  };

  if (g.kind == Group::Horizontal) {
    if (threshold > 0 && n >= threshold)
      return "it is large enough for a parallel loop of its own";
    SmallVector<Access> acc = accesses(ctx, op, -1);
    for (const Member &m : g.members)
      if (touchesRoot(acc, m.access))
        return "it depends on another op of the horizontal group";
    if (isSliceable(op, acc)) {
      g.members.push_back({op, Role::Chunked, acc});
    } else if (n <= kTinyOp) {
      g.members.push_back({op, Role::First, acc});
    } else {
      return "not elementwise over whole buffers";
    }
    g.work += n;
    return nullptr;
  }

  int64_t lead = op.getNumLoops() > 0 ? op.getStaticLoopRanges()[0] : -1;
  if (lead > 0 && !g.hasRowMembers())
    g.rows = lead; // scalar ops so far: the first op with loops decides
  SmallVector<Access> acc = accesses(ctx, op, g.rows);
  if (lead == g.rows) {
    bool parallel =
        g.parallel &&
        op.getIteratorTypesArray()[0] == utils::IteratorType::parallel &&
        llvm::all_of(acc,
                     [](const Access &a) { return !a.write || a.rowLocal; });
    for (const Member &m : g.members) {
      if (m.role == Role::Row && conflict(acc, m.access, /*rowLocal=*/true))
        return "it reads or writes rows other iterations produce";
      if (m.role == Role::Last && touchesRoot(acc, m.access))
        return "it touches what a scalar op at the end of the group computes";
      if (m.role == Role::First && touchesRoot(acc, m.access))
        parallel = false; // iteration 0 must run first
    }
    if (wouldSerialize(parallel))
      return "it would make a loop that runs on all cores serial";
    g.parallel = parallel;
    g.work += n;
    g.members.push_back({op, Role::Row, acc});
    return nullptr;
  }

  // Another shape, and more than a scalar's work: elementwise ops of
  // different shapes can still share a chunked loop.
  if (n > kTinyOp)
    return tryHorizontal(ctx, g, op)
               ? nullptr
               : "its outer loop differs from the group's";
  // A tiny op of another shape: once, by the first iteration when it reads
  // nothing the group wrote, else by the last.
  bool dependsOnRows = false;
  for (const Member &m : g.members)
    if (touchesRoot(acc, m.access))
      dependsOnRows = true;
  Role role = dependsOnRows ? Role::Last : Role::First;
  bool parallel = g.parallel && !dependsOnRows;
  if (wouldSerialize(parallel))
    return "it would make a loop that runs on all cores serial";
  g.parallel = parallel;
  g.work += n;
  g.members.push_back({op, role, acc});
  return nullptr;
}

/// Turns a rows group whose next op does not fit into a horizontal group:
/// possible when its ops and `op` are elementwise over whole buffers (or
/// tiny scalars) and independent of each other.
bool tryHorizontal(const FuseContext &ctx, Group &g, linalg::LinalgOp op) {
  const int64_t threshold = ctx.parallelThreshold;
  // An update big enough for a team of its own keeps its plain parallel
  // loop: its rows split evenly, no chunk dispatch (measured faster on the
  // 784x128 Adam update than its chunks in a horizontal group).
  auto big = [&](linalg::LinalgOp o) {
    return threshold > 0 && iterations(o) >= threshold;
  };
  if (big(op))
    return false;
  SmallVector<Member> members;
  for (const Member &m : g.members) {
    if (m.role == Role::Last)
      return false;
    SmallVector<Access> acc = accesses(ctx, m.op, -1);
    if (m.role == Role::Row && (!isSliceable(m.op, acc) || big(m.op)))
      return false;
    members.push_back(
        {m.op, m.role == Role::Row ? Role::Chunked : Role::First, acc});
  }
  SmallVector<Access> acc = accesses(ctx, op, -1);
  if (!isSliceable(op, acc))
    return false;
  members.push_back({op, Role::Chunked, acc});
  for (size_t i = 0; i < members.size(); ++i)
    for (size_t j = i + 1; j < members.size(); ++j)
      if (touchesRoot(members[i].access, members[j].access))
        return false;
  g.kind = Group::Horizontal;
  g.parallel = true;
  g.members = std::move(members);
  g.work += iterations(op);
  return true;
}

/// Lowers `op` to loops at its position and returns the outermost loop
/// (null for a 0-d op or on failure). A row member keeps its outer loop a
/// unit-step loop over the rows.
scf::ForOp lowerToLoops(IRRewriter &rewriter, linalg::LinalgOp op,
                        bool rowMember = false) {
  FailureOr<scf::ForOp> outer =
      kcc::codegen::lowerToLoopNest(rewriter, op, rowMember);
  return failed(outer) ? scf::ForOp() : *outer;
}

/// Moves `op` into a new `scf.if cond` before `before` and lowers it there.
void lowerGuarded(IRRewriter &rewriter, linalg::LinalgOp op, Value cond,
                  Operation *before) {
  rewriter.setInsertionPoint(before);
  auto ifOp = rewriter.create<scf::IfOp>(op.getLoc(), cond,
                                         /*withElseRegion=*/false);
  op->moveBefore(ifOp.thenBlock()->getTerminator());
  lowerToLoops(rewriter, op);
}

/// The names of the layers (location names) `ops` came from.
SmallVector<StringRef> layerNames(ArrayRef<Member> members) {
  llvm::SetVector<StringRef> names;
  for (const Member &m : members)
    m.op->getLoc()->walk([&](Location loc) {
      if (auto name = dyn_cast<NameLoc>(loc))
        names.insert(name.getName().strref());
      return WalkResult::advance();
    });
  return SmallVector<StringRef>(names.begin(), names.end());
}

/// Bytes of the buffers only this group touches: written and read inside,
/// never outside. They stay in cache between producer and consumer.
int64_t localBytes(const Group &g, Operation *loop) {
  llvm::SmallDenseSet<Value> roots;
  for (const Member &m : g.members)
    for (const Access &a : m.access)
      roots.insert(a.root);
  int64_t bytes = 0;
  for (Value root : roots) {
    auto alloc = root.getDefiningOp<memref::AllocOp>();
    if (!alloc || !alloc.getType().hasStaticShape())
      continue;
    bool outside = false;
    SmallVector<Value> work = {root};
    while (!work.empty() && !outside) {
      Value v = work.pop_back_val();
      for (Operation *user : v.getUsers()) {
        if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp,
                memref::SubViewOp, memref::ReinterpretCastOp>(user)) {
          work.push_back(user->getResult(0));
          continue;
        }
        if (!loop->isAncestor(user))
          outside = true;
      }
    }
    if (!outside)
      bytes += alloc.getType().getNumElements() *
               alloc.getType().getElementTypeBitWidth() / 8;
  }
  return bytes;
}

struct KcFuseLoopsPass : public kcc::impl::KcFuseLoopsBase<KcFuseLoopsPass> {
  using KcFuseLoopsBase::KcFuseLoopsBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      FuseContext ctx;
      ctx.parallelThreshold = parallelThreshold;
      std::optional<ArrayRef<int64_t>> pairs = kc::getInPlacePairs(func);
      std::optional<int64_t> numInputs =
          kc::getCount(func, kc::attr::kNumInputs);
      if (pairs && numInputs)
        for (size_t i = 0; i + 1 < pairs->size(); i += 2)
          ctx.inPlaceAliases[func.getArgument(*numInputs + (*pairs)[i])] =
              func.getArgument((*pairs)[i + 1]);
      if (failed(runOnBlock(ctx, func.getBody().front())))
        return signalPassFailure();
    }
  }

  /// Ops that neither read nor write memory (views, constants, pointer
  /// arithmetic) or only allocate: a group's ops may move past them.
  static bool isNeutral(Operation &op) {
    return isa<memref::AllocOp>(op) || isMemoryEffectFree(&op);
  }

  LogicalResult runOnBlock(const FuseContext &ctx, Block &block) {
    SmallVector<Group> groups;
    std::optional<Group> current;
    auto close = [&] {
      if (current && current->members.size() > 1)
        groups.push_back(std::move(*current));
      current.reset();
    };
    for (Operation &op : block) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (!linalgOp || !linalgOp.hasPureBufferSemantics()) {
        if (!isNeutral(op))
          close();
        continue;
      }
      if (current) {
        const char *why = tryAdd(ctx, *current, linalgOp);
        if (!why)
          continue;
        if (remarks && current->hasRowMembers())
          op.emitRemark() << "not fused with the loop nest before: " << why;
        close();
      }
      if (!isStatic(linalgOp))
        continue;
      current.emplace();
      current->rows =
          linalgOp.getNumLoops() > 0 ? linalgOp.getStaticLoopRanges()[0] : 1;
      if (tryAdd(ctx, *current, linalgOp))
        current.reset();
    }
    close();
    IRRewriter rewriter(block.getParentOp()->getContext());
    for (Group &g : groups)
      if (failed(g.kind == Group::Rows ? lowerRows(rewriter, g)
                                       : lowerHorizontal(rewriter, g)))
        return failure();
    return success();
  }

  /// Records the group on its loop and reports it.
  void annotate(scf::ForOp loop, const Group &g, ArrayRef<StringRef> layers) {
    Builder b(loop.getContext());
    SmallVector<Attribute> names;
    for (StringRef n : layers)
      names.push_back(b.getStringAttr(n));
    int64_t local = localBytes(g, loop);
    kc::setFusion(
        loop, b.getDictionaryAttr(
                  {b.getNamedAttr("kind", b.getStringAttr(g.kind == Group::Rows
                                                              ? "rows"
                                                              : "horizontal")),
                   b.getNamedAttr("ops", b.getI64IntegerAttr(g.members.size())),
                   b.getNamedAttr("layers", b.getArrayAttr(names)),
                   b.getNamedAttr("local_bytes", b.getI64IntegerAttr(local))}));
    bool par =
        g.parallel && parallelThreshold > 0 && g.work >= parallelThreshold;
    if (par)
      kc::setParallelLoop(loop);
    ++numGroups;
    numGroupedOps += g.members.size();
    if (remarks) {
      InFlightDiagnostic d = loop.emitRemark();
      d << "fusion group (" << (g.kind == Group::Rows ? "rows" : "horizontal")
        << ", " << (par ? "parallel" : "serial") << "): " << g.members.size()
        << " loop nests in one kernel, layers [";
      llvm::interleaveComma(layers, d);
      d << "], " << local << " B of buffers used only inside it";
    }
  }

  LogicalResult lowerRows(IRRewriter &rewriter, Group &g) {
    SmallVector<StringRef> layers = layerNames(g.members);
    Operation *last = g.members.back().op;
    Location loc = last->getLoc();
    rewriter.setInsertionPoint(last);
    Value lb = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value ub = rewriter.create<arith::ConstantIndexOp>(loc, g.rows);
    Value step = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    auto loop = rewriter.create<scf::ForOp>(loc, lb, ub, step);
    Operation *terminator = loop.getBody()->getTerminator();
    Value iv = loop.getInductionVar();
    rewriter.setInsertionPoint(terminator);
    Value isFirst =
        rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, iv, lb);
    Value lastIndex = rewriter.create<arith::ConstantIndexOp>(loc, g.rows - 1);
    Value isLast = rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                  iv, lastIndex);
    for (Member &m : g.members) {
      if (m.role != Role::Row) {
        lowerGuarded(rewriter, m.op, m.role == Role::First ? isFirst : isLast,
                     terminator);
        continue;
      }
      m.op->moveBefore(terminator);
      scf::ForOp outer = lowerToLoops(rewriter, m.op, /*rowMember=*/true);
      if (!outer)
        return loop.emitError("fusion group: cannot lower a member to loops");
      // The member's outer loop is the group's: run its body at row iv.
      Block *body = outer.getBody();
      rewriter.eraseOp(body->getTerminator());
      rewriter.inlineBlockBefore(body, outer, ValueRange{iv});
      rewriter.eraseOp(outer);
    }
    annotate(loop, g, layers);
    return success();
  }

  LogicalResult lowerHorizontal(IRRewriter &rewriter, Group &g) {
    SmallVector<StringRef> layers = layerNames(g.members);
    Operation *last = g.members.back().op;
    Location loc = last->getLoc();
    rewriter.setInsertionPoint(last);
    auto index = [&](int64_t v) {
      return rewriter.create<arith::ConstantIndexOp>(loc, v).getResult();
    };
    // Chunk ranges per member, in order.
    SmallVector<std::pair<int64_t, int64_t>> ranges; // [first, end) chunk
    int64_t chunks = 0;
    for (Member &m : g.members) {
      int64_t c = m.role == Role::Chunked
                      ? (iterations(m.op) + kChunk - 1) / kChunk
                      : 0;
      ranges.push_back({chunks, chunks + c});
      chunks += c;
    }
    // Every operand seen as one flat dimension, outside the loop. One view
    // per buffer: a parameter updated in place is read and written through
    // the same pointer, which LLVM's vectorizer needs to see as one (two
    // equal pointers fail its runtime overlap check: a scalar loop).
    SmallVector<SmallVector<Value>> flat;
    DenseMap<Value, Value> flattened;
    for (Member &m : g.members) {
      flat.emplace_back();
      if (m.role != Role::Chunked)
        continue;
      for (Value v : m.op->getOperands()) {
        auto t = dyn_cast<MemRefType>(v.getType());
        if (!t || t.getRank() <= 1) {
          flat.back().push_back(v);
          continue;
        }
        Value &view = flattened[v];
        if (!view) {
          ReassociationIndices all;
          for (int64_t d = 0; d < t.getRank(); ++d)
            all.push_back(d);
          view = rewriter.create<memref::CollapseShapeOp>(
              loc, v, ArrayRef<ReassociationIndices>{all});
        }
        flat.back().push_back(view);
      }
    }
    Value zero = index(0);
    auto loop = rewriter.create<scf::ForOp>(loc, zero, index(chunks), index(1));
    Operation *terminator = loop.getBody()->getTerminator();
    Value c = loop.getInductionVar();
    rewriter.setInsertionPoint(terminator);
    Value isFirst =
        rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, c, zero);
    MLIRContext *ctx = rewriter.getContext();
    for (auto [m, range, operands] : llvm::zip(g.members, ranges, flat)) {
      if (m.role != Role::Chunked) {
        lowerGuarded(rewriter, m.op, isFirst, terminator);
        continue;
      }
      rewriter.setInsertionPoint(terminator);
      Value inRange = rewriter.create<arith::AndIOp>(
          loc,
          rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, c,
                                         index(range.first)),
          rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, c,
                                         index(range.second)));
      auto ifOp = rewriter.create<scf::IfOp>(loc, inRange, false);
      rewriter.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      int64_t n = iterations(m.op);
      Value offset = rewriter.create<arith::MulIOp>(
          loc, rewriter.create<arith::SubIOp>(loc, c, index(range.first)),
          index(kChunk));
      Value size = rewriter.create<arith::MinSIOp>(
          loc, index(kChunk),
          rewriter.create<arith::SubIOp>(loc, index(n), offset));
      // The member on this chunk: the same body over 1-D slices.
      auto generic = cast<linalg::GenericOp>(m.op.getOperation());
      SmallVector<Value> ins, outs;
      SmallVector<AffineMap> maps;
      AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
      DenseMap<Value, Value> slices; // one slice per buffer, as above
      for (auto [operand, v] : llvm::zip(m.op->getOpOperands(), operands)) {
        Value slice = v;
        AffineMap map = AffineMap::get(1, 0, ArrayRef<AffineExpr>{}, ctx);
        auto t = dyn_cast<MemRefType>(v.getType());
        if (t && t.getRank() == 1) {
          Value &s = slices[v];
          if (!s)
            s = rewriter.create<memref::SubViewOp>(
                loc, v, ArrayRef<OpFoldResult>{offset},
                ArrayRef<OpFoldResult>{size},
                ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
          slice = s;
          map = identity;
        }
        (m.op.isDpsInit(&operand) ? outs : ins).push_back(slice);
        maps.push_back(map);
      }
      auto sliced = rewriter.create<linalg::GenericOp>(
          generic.getLoc(), TypeRange{}, ins, outs, maps,
          SmallVector<utils::IteratorType>{utils::IteratorType::parallel});
      rewriter.cloneRegionBefore(generic.getRegion(), sliced.getRegion(),
                                 sliced.getRegion().end());
      rewriter.eraseOp(generic);
      lowerToLoops(rewriter, sliced);
    }
    annotate(loop, g, layers);
    return success();
  }
};

} // namespace

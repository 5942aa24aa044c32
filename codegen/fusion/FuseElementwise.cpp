//===- FuseElementwise.cpp - Producer/consumer fusion of linalg.generic ---===//
//
// kc-fuse-elementwise: linalg's elementwise fusion with a wider rule.
// Upstream's linalg-fuse-elementwise-ops fuses a producer only into its
// single user. A train step is full of values with two users: the Adam
// moments m' and v' are returned and feed the parameter update, an
// activation feeds the next layer and is kept for backprop. Here such a
// producer is fused too when its consumer is elementwise (all parallel
// loops) and every other user comes after the consumer: the fused op
// computes the producer once and also yields its value (linalg keeps the
// producer's result as an extra result), so nothing is recomputed and
// nothing used before the consumer moves after it.
//
// The fusion phase (codegen/fusion/). In: linalg on tensors, one generic per
// kc op. Out: fewer, bigger kernels: elementwise chains as one generic (this
// pass), big sums split into parallel partial sums (kc-split-reductions),
// bias and activations as epilogues of the GEMM and convolution calls
// (kc-fuse-epilogues); then, on buffers, consecutive loop nests under one
// loop (kc-fuse-loops). Every decision can be reported as a remark
// (`kcc --fusion-report`).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/pipeline/StraightLineRewrite.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "kc-fuse-elementwise"

namespace kcc {
#define GEN_PASS_DEF_KCFUSEELEMENTWISE
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;

namespace {

bool allParallel(linalg::GenericOp op) {
  return op.getNumLoops() == op.getNumParallelLoops();
}

/// Recomputing a broadcast producer up to this many times per element is
/// accepted.
constexpr int64_t kMaxRecomputation = 64;

/// Why fusing `fused`'s producer into its consumer would cost more than it
/// saves, or null when it would not: a producer read through a broadcast is
/// recomputed at every consumer iteration that reads the same element, which
/// is cheap for adds and selects but not for math functions or divisions.
const char *costReason(OpOperand *fused) {
  auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
  auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer)
    return nullptr;
  if (consumer.getMatchingIndexingMap(fused).isPermutation())
    return nullptr;
  // A few recomputations (a row statistic broadcast over ten classes) cost
  // less than the kernel a refusal leaves; a scalar broadcast over a
  // parameter tensor does not.
  auto iterations = [](linalg::GenericOp op) {
    int64_t n = 1;
    for (int64_t r : op.getStaticLoopRanges())
      n *= ShapedType::isDynamic(r) ? 1 : r;
    return n;
  };
  if (iterations(consumer) < kMaxRecomputation * iterations(producer))
    return nullptr;
  bool expensive = false;
  producer.getBody()->walk([&](Operation *op) {
    if (op->getDialect()->getNamespace() == "math" ||
        isa<arith::DivFOp, arith::RemFOp>(op))
      expensive = true;
  });
  return expensive ? "the producer is read through a broadcast and computes "
                     "math functions or divisions: fusing would recompute "
                     "them for each of at least 64 consumer elements"
                   : nullptr;
}

/// The order of the operations in their blocks, kept while patterns rewrite
/// them. Operation::isBeforeInBlock renumbers the whole block when
/// insertions have used up the gaps between its order indices, and each
/// fusion inserts its op where the consumer was: on a training step of a
/// few ten thousand operations that renumbering was most of this pass (2.5
/// s of DenseNet121's compile). Here an inserted op takes the middle of the
/// gap its neighbours leave (2^32 at first, so 32 insertions at one place);
/// an op no number fits falls back to isBeforeInBlock.
class OpOrder : public RewriterBase::Listener {
public:
  /// Numbers the ops of every block under `root`.
  explicit OpOrder(Operation *root) {
    root->walk([&](Block *block) {
      int64_t next = 0;
      for (Operation &op : *block)
        position_[&op] = next += kStride;
    });
  }

  /// Whether `a` comes before `b`, two ops of one block.
  bool isBefore(Operation *a, Operation *b) const {
    auto ia = position_.find(a), ib = position_.find(b);
    if (ia != position_.end() && ib != position_.end())
      return ia->second < ib->second;
    return a->isBeforeInBlock(b);
  }

  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    // A moved op's number is stale; a new one has none yet.
    position_.erase(op);
    std::optional<int64_t> before = positionOf(op->getPrevNode());
    std::optional<int64_t> after = positionOf(op->getNextNode());
    if (before && after && *after - *before > 1)
      position_[op] = *before + (*after - *before) / 2;
    else if (before && !op->getNextNode())
      position_[op] = *before + kStride;
    else if (after && !op->getPrevNode())
      position_[op] = *after - kStride;
  }
  void notifyOperationErased(Operation *op) override { position_.erase(op); }

private:
  static constexpr int64_t kStride = int64_t(1) << 32;

  std::optional<int64_t> positionOf(Operation *op) const {
    if (!op)
      return std::nullopt;
    auto it = position_.find(op);
    return it == position_.end() ? std::nullopt
                                 : std::optional<int64_t>(it->second);
  }

  llvm::DenseMap<Operation *, int64_t> position_;
};

/// Single-use producers always (upstream's rule); multi-use producers into
/// an elementwise consumer when no other user precedes the consumer.
bool shouldFuse(OpOperand *fused, bool multiUse,
                const OpOrder *order = nullptr) {
  Operation *producer = fused->get().getDefiningOp();
  if (!producer)
    return false;
  if (producer->hasOneUse())
    return true;
  if (!multiUse)
    return false;
  // A rank-0 producer with several users (a step scalar of the optimizer
  // or of a learning-rate schedule) stays out: fusing it into one user after
  // another copies the growing fused body each time, and on the scalar DAG
  // of a cosine schedule with Adam that took minutes. kc-fuse-loops still
  // groups the scalar loop nests into one kernel.
  if (auto t = dyn_cast<RankedTensorType>(fused->get().getType());
      t && t.getRank() == 0)
    return false;
  auto producerOp = dyn_cast<linalg::GenericOp>(producer);
  auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
  if (!producerOp || !consumer || !allParallel(producerOp) ||
      !allParallel(consumer) || producer->getBlock() != consumer->getBlock())
    return false;
  // Read through a broadcast, the producer's values the fused op still
  // yields would be written once per broadcast iteration; when such a value
  // later goes in place over an input it was computed from (a moving mean
  // over the previous one), each iteration would read the last one's write.
  if (!consumer.getMatchingIndexingMap(fused).isPermutation())
    return false;
  for (Operation *user : producer->getUsers())
    if (user != consumer.getOperation() &&
        (user->getBlock() != consumer->getBlock() ||
         (order ? order->isBefore(user, consumer)
                : user->isBeforeInBlock(consumer))))
      return false;
  return true;
}

/// linalg's FuseElementwiseOps, except that a producer's values the fused
/// op preserves replace the producer's remaining uses (upstream leaves the
/// producer in place for them, so a multi-use producer runs twice: two
/// loop nests, recomputed values). shouldFuse guaranteed those uses all come
/// after the consumer, where the fused op is.
/// Bytes of `t` when statically shaped, else 0.
int64_t tensorBytes(Type t) {
  auto shaped = dyn_cast<RankedTensorType>(t);
  if (!shaped || !shaped.hasStaticShape() ||
      !shaped.getElementType().isIntOrFloat())
    return 0;
  return shaped.getNumElements() * ((shaped.getElementTypeBitWidth() + 7) / 8);
}

/// The producer's results the fused op must still yield: those read by an
/// op other than the consumer, whose init the payload reads, or whose init
/// the producer needs for its loop bounds. The same set as linalg's
/// getPreservedProducerResults, with the questions asked cheapest first: its
/// bounds check concatenates every indexing map of the producer, once per
/// result, which is quadratic in the size of a producer that has grown by
/// earlier fusions (the Adam updates of every same-shaped parameter end up in
/// one op through the shared learning-rate broadcast).
llvm::SmallDenseSet<int> preservedResults(linalg::GenericOp producer,
                                          linalg::GenericOp consumer) {
  llvm::SmallDenseSet<int> preserved;
  for (OpResult result : producer->getResults()) {
    OpOperand *init = producer.getDpsInitOperand(result.getResultNumber());
    if (llvm::any_of(
            result.getUsers(),
            [&](Operation *u) { return u != consumer.getOperation(); }) ||
        producer.payloadUsesValueFromOperand(init) ||
        !producer.canOpOperandsBeDropped(init))
      preserved.insert(result.getResultNumber());
  }
  return preserved;
}

/// The map from the fused op's loops to the tensor `operand` of the
/// producer reads, given the producer's result map and the consumer's map
/// of the fused operand.
AffineMap producerOperandMapInConsumerLoops(linalg::GenericOp producer,
                                            OpOperand *operand,
                                            AffineMap producerResultMap,
                                            AffineMap consumerOperandMap) {
  AffineMap toProducerLoops = inversePermutation(producerResultMap);
  return producer.getMatchingIndexingMap(operand)
      .compose(toProducerLoops)
      .compose(consumerOperandMap);
}

/// linalg::fuseElementwiseOps with preservedResults: the same fused op
/// (operands, maps, block arguments and body in the same order), in time
/// linear in the size of the two ops. Every other input of the consumer
/// that reads the producer at the same point (the same result or another,
/// through the same maps) is fused with it: one copy of the producer's
/// body serves them all. Fused one at a time, each would leave the
/// producer behind for the next, and its body would be copied once per
/// operand: on a DAG that reuses its values (an RGB -> HSV conversion and
/// its gradient) the copies multiply at each level, exponentially.
FailureOr<linalg::ElementwiseOpFusionResult>
fuseIntoConsumer(RewriterBase &rewriter, OpOperand *fusedOperand) {
  auto producerResult = cast<OpResult>(fusedOperand->get());
  auto producer = cast<linalg::GenericOp>(producerResult.getOwner());
  auto consumer = cast<linalg::GenericOp>(fusedOperand->getOwner());
  llvm::SmallDenseSet<int> preserved = preservedResults(producer, consumer);
  unsigned fusedIndex = fusedOperand->getOperandNumber();

  AffineMap producerResultMap =
      producer.getIndexingMapMatchingResult(producerResult);
  AffineMap consumerOperandMap = consumer.getMatchingIndexingMap(fusedOperand);
  auto inFusedLoops = [&](OpOperand *operand) {
    return producerOperandMapInConsumerLoops(
        producer, operand, producerResultMap, consumerOperandMap);
  };
  // The consumer's inputs fused with `fusedOperand`, itself included.
  llvm::SmallDenseSet<unsigned> alsoFused;
  for (OpOperand *in : consumer.getDpsInputOperands()) {
    auto r = dyn_cast<OpResult>(in->get());
    if (r && r.getOwner() == producer &&
        consumer.getMatchingIndexingMap(in) == consumerOperandMap &&
        producer.getIndexingMapMatchingResult(r) == producerResultMap)
      alsoFused.insert(in->getOperandNumber());
  }

  // Inputs: the consumer's before the fused one, the producer's, the
  // consumer's after it. Inits: the producer's preserved, the consumer's.
  SmallVector<Value> inputs, inits;
  SmallVector<Type> resultTypes;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : consumer.getDpsInputOperands()) {
    if (in == fusedOperand) {
      for (OpOperand *pin : producer.getDpsInputOperands()) {
        inputs.push_back(pin->get());
        maps.push_back(inFusedLoops(pin));
      }
      continue;
    }
    if (alsoFused.contains(in->getOperandNumber()))
      continue;
    inputs.push_back(in->get());
    maps.push_back(consumer.getMatchingIndexingMap(in));
  }
  for (OpOperand &init : producer.getDpsInitsMutable()) {
    if (!preserved.contains(init.getOperandNumber() -
                            producer.getNumDpsInputs()))
      continue;
    inits.push_back(init.get());
    maps.push_back(inFusedLoops(&init));
    resultTypes.push_back(init.get().getType());
  }
  for (OpOperand &init : consumer.getDpsInitsMutable()) {
    inits.push_back(init.get());
    maps.push_back(consumer.getMatchingIndexingMap(&init));
    if (!isa<MemRefType>(init.get().getType()))
      resultTypes.push_back(init.get().getType());
  }
  auto fusedOp = rewriter.create<linalg::GenericOp>(
      consumer.getLoc(), resultTypes, inputs, inits,
      rewriter.getAffineMapArrayAttr(maps), consumer.getIteratorTypes(),
      /*doc=*/nullptr, /*library_call=*/nullptr);
  if (!fusedOp.getShapesToLoopsMap()) {
    rewriter.eraseOp(fusedOp);
    return rewriter.notifyMatchFailure(consumer, "fused op has no loop bounds");
  }

  // The body: block arguments in operand order, the producer's payload,
  // then the consumer's reading the producer's yielded value.
  Block &producerBlock = producer->getRegion(0).front();
  Block &consumerBlock = consumer->getRegion(0).front();
  OpBuilder::InsertionGuard guard(rewriter);
  Block *block = rewriter.createBlock(&fusedOp.getRegion());
  IRMapping mapper;
  if (producer.hasIndexSemantics()) {
    // The producer's loop indices, computed from the fused op's.
    AffineMap consumerToProducer =
        inversePermutation(producerResultMap).compose(consumerOperandMap);
    SmallVector<Value> indices;
    for (unsigned d = 0, e = fusedOp.getNumLoops(); d < e; ++d)
      indices.push_back(rewriter.create<linalg::IndexOp>(producer.getLoc(), d));
    for (linalg::IndexOp index : producerBlock.getOps<linalg::IndexOp>())
      mapper.map(index.getResult(),
                 rewriter.create<affine::AffineApplyOp>(
                     producer.getLoc(),
                     consumerToProducer.getSubMap(index.getDim()), indices));
  }
  auto addArg = [&](BlockArgument arg) {
    mapper.map(arg, block->addArgument(arg.getType(), arg.getLoc()));
  };
  for (BlockArgument arg :
       consumerBlock.getArguments().take_front(consumer.getNumDpsInputs())) {
    if (arg.getArgNumber() == fusedIndex) {
      for (BlockArgument parg :
           producerBlock.getArguments().take_front(producer.getNumDpsInputs()))
        addArg(parg);
    } else if (!alsoFused.contains(arg.getArgNumber())) {
      addArg(arg);
    }
  }
  for (auto [i, arg] : llvm::enumerate(
           producerBlock.getArguments().take_back(producer.getNumDpsInits())))
    if (preserved.contains(i))
      addArg(arg);
  for (BlockArgument arg :
       consumerBlock.getArguments().take_back(consumer.getNumDpsInits()))
    addArg(arg);
  // Each payload is moved rather than cloned when its op goes away after the
  // fusion: the consumer always, the producer unless the fused op still
  // reads another of its results. Cloning a producer that earlier fusions
  // made large, once per fusion, is what made this pass quadratic. The
  // moved ops compute what they computed; only their block changes.
  bool moveProducer =
      llvm::none_of(consumer->getOpOperands(), [&](OpOperand &o) {
        return !alsoFused.contains(o.getOperandNumber()) &&
               o.get().getDefiningOp() == producer;
      });
  auto append = [&](Block &from, bool move) {
    if (!move) {
      for (Operation &op : from.without_terminator())
        if (&from != &producerBlock || !isa<linalg::IndexOp>(op))
          rewriter.clone(op, mapper);
      return;
    }
    for (BlockArgument arg : from.getArguments())
      if (Value to = mapper.lookupOrNull(arg))
        arg.replaceAllUsesWith(to);
    if (&from == &producerBlock)
      for (linalg::IndexOp index :
           llvm::make_early_inc_range(from.getOps<linalg::IndexOp>())) {
        index.getResult().replaceAllUsesWith(mapper.lookup(index.getResult()));
        rewriter.eraseOp(index);
      }
    block->getOperations().splice(block->end(), from.getOperations(),
                                  from.begin(), std::prev(from.end()));
  };
  append(producerBlock, moveProducer);
  auto producerYield = cast<linalg::YieldOp>(producerBlock.getTerminator());
  for (unsigned i : alsoFused)
    mapper.map(consumerBlock.getArgument(i),
               mapper.lookupOrDefault(producerYield.getOperand(
                   cast<OpResult>(consumer->getOperand(i)).getResultNumber())));
  append(consumerBlock, /*move=*/true);
  SmallVector<Value> yielded;
  for (auto [i, v] : llvm::enumerate(producerYield.getOperands()))
    if (preserved.contains(i))
      yielded.push_back(mapper.lookupOrDefault(v));
  for (Value v : consumerBlock.getTerminator()->getOperands())
    yielded.push_back(mapper.lookupOrDefault(v));
  rewriter.create<linalg::YieldOp>(fusedOp.getLoc(), yielded);

  linalg::ElementwiseOpFusionResult result;
  result.fusedOp = fusedOp;
  unsigned next = 0;
  for (OpResult r : producer->getResults())
    if (preserved.contains(r.getResultNumber()))
      result.replacements[r] = fusedOp->getResult(next++);
  for (OpResult r : consumer->getResults())
    result.replacements[r] = fusedOp->getResult(next++);
  return result;
}

struct FuseProducers : public OpRewritePattern<linalg::GenericOp> {
  FuseProducers(MLIRContext *ctx, bool multiUse, bool remarks,
                const OpOrder *order)
      : OpRewritePattern(ctx), multiUse(multiUse), remarks(remarks),
        order(order) {}

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand &operand : consumer->getOpOperands()) {
      if (!linalg::areElementwiseOpsFusable(&operand) ||
          !shouldFuse(&operand, multiUse, order))
        continue;
      if (costReason(&operand))
        continue; // reported after the rewrite, with `remarks`
      Operation *producer = operand.get().getDefiningOp();
      // The producer's values only this consumer reads are never stored.
      int64_t saved = 0;
      for (Value r : producer->getResults())
        if (llvm::all_of(r.getUsers(), [&](Operation *u) {
              return u == consumer.getOperation();
            }))
          saved += tensorBytes(r.getType());
      Location producerLoc = producer->getLoc();
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          fuseIntoConsumer(rewriter, &operand);
      if (failed(fused))
        return rewriter.notifyMatchFailure(consumer, "fusion failed");
      for (auto [orig, replacement] : fused->replacements) {
        Operation *fusedOp = fused->fusedOp;
        rewriter.replaceUsesWithIf(orig, replacement, [&](OpOperand &use) {
          return use.getOwner() != fusedOp;
        });
      }
      if (remarks && saved > 0)
        fused->fusedOp->emitRemark()
            << "elementwise fusion: a producer at " << producerLoc
            << " fused into its consumer; " << saved
            << " B never written to memory";
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }

  bool multiUse, remarks;
  const OpOrder *order;
};

/// linalg's pattern that expands a linalg op to absorb a tensor.collapse_shape
/// feeding it, asked first the one question that is cheap: does a collapse
/// the control function accepts feed the op at all? The pattern itself checks
/// every indexing map of the op once per collapsed operand before asking the
/// control function, which on an op grown large by fusion (one input per
/// layer, each a collapsed bias gradient) costs time quadratic in its size
/// at every visit. It can apply only when this check passes, so the answer
/// is the same.
struct GuardedReshapeExpansion : public RewritePattern {
  GuardedReshapeExpansion(std::unique_ptr<RewritePattern> pattern,
                          linalg::ControlFusionFn control)
      : RewritePattern(MatchInterfaceOpTypeTag(),
                       TypeID::get<linalg::LinalgOp>(), pattern->getBenefit(),
                       pattern->getContext()),
        pattern(std::move(pattern)), control(std::move(control)) {
    setHasBoundedRewriteRecursion(this->pattern->hasBoundedRewriteRecursion());
  }

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    for (OpOperand *in : linalgOp.getDpsInputOperands())
      if (in->get().getDefiningOp<tensor::CollapseShapeOp>() && control(in))
        return pattern->matchAndRewrite(op, rewriter);
    return failure();
  }

  std::unique_ptr<RewritePattern> pattern;
  linalg::ControlFusionFn control;
};

/// linalg::populateFoldReshapeOpsByExpansionPatterns, its pattern on linalg
/// ops behind GuardedReshapeExpansion.
void addReshapeExpansionPatterns(RewritePatternSet &patterns,
                                 const linalg::ControlFusionFn &control) {
  RewritePatternSet reshape(patterns.getContext());
  linalg::populateFoldReshapeOpsByExpansionPatterns(reshape, control);
  for (std::unique_ptr<RewritePattern> &p : reshape.getNativePatterns()) {
    if (p->getRootInterfaceID() == TypeID::get<linalg::LinalgOp>())
      patterns.add(
          std::make_unique<GuardedReshapeExpansion>(std::move(p), control));
    else
      patterns.add(std::move(p));
  }
}

/// Whether `op` only moves values: a linalg.fill, or an elementwise
/// linalg.generic that reads no tensor in full (each input broadcast or a
/// scalar) and whose body computes nothing (yields its inputs or values
/// defined outside). Reading its inputs from each consumer costs nothing
/// more than reading its result.
bool isCheapProducer(Operation *op) {
  if (isa<linalg::FillOp>(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureTensorSemantics() || !allParallel(generic) ||
      generic.hasIndexSemantics() || generic.getNumDpsInits() != 1)
    return false;
  for (OpOperand *in : generic.getDpsInputOperands())
    if (generic.getMatchingIndexingMap(in).getNumResults() >=
        generic.getNumLoops())
      return false;
  return llvm::all_of(generic.getBody()->without_terminator(),
                      [](Operation &o) { return isa<arith::ConstantOp>(o); });
}

/// Gives each elementwise consumer of a cheap producer (a broadcast, a fill)
/// its own copy, which single-use fusion then folds into it. Shared, such a
/// producer ties its consumers together: the learning-rate broadcast that the
/// optimizer update of every same-shaped parameter reads would make
/// multi-use fusion merge all those independent updates into one op, one
/// layer at a time (time quadratic in the model, one basic block that grows
/// with it). Cloned, each update stays its own loop nest, as IREE clones
/// such producers into each dispatch region. Consumers that cannot fuse it
/// keep reading the original.
void cloneCheapProducers(func::FuncOp func) {
  SmallVector<Operation *> cheap;
  func.walk([&](Operation *op) {
    if (!op->hasOneUse() && !op->use_empty() && isCheapProducer(op))
      cheap.push_back(op);
  });
  OpBuilder builder(func.getContext());
  for (Operation *producer : cheap) {
    Value result = producer->getResult(0);
    SmallVector<Operation *> users;
    for (OpOperand &use : result.getUses())
      if (isa<linalg::GenericOp>(use.getOwner()) &&
          allParallel(cast<linalg::GenericOp>(use.getOwner())) &&
          !llvm::is_contained(users, use.getOwner()))
        users.push_back(use.getOwner());
    // The first user can take the original when no other reads it.
    bool keepForOthers = llvm::any_of(result.getUsers(), [&](Operation *u) {
      return !llvm::is_contained(users, u);
    });
    for (Operation *user : llvm::drop_begin(users, keepForOthers ? 0 : 1)) {
      builder.setInsertionPoint(user);
      Operation *copy = builder.clone(*producer);
      // Its init (a tensor.empty) is cloned too: a shared init would be one
      // buffer that bufferization has to copy for every writer.
      if (auto dps = dyn_cast<DestinationStyleOpInterface>(copy))
        for (OpOperand &init : dps.getDpsInitsMutable())
          if (Operation *def = init.get().getDefiningOp<tensor::EmptyOp>())
            init.set(builder.clone(*def)->getResult(0));
      user->replaceUsesOfWith(result, copy->getResult(0));
    }
  }
}

struct KcFuseElementwisePass
    : public kcc::impl::KcFuseElementwiseBase<KcFuseElementwisePass> {
  using KcFuseElementwiseBase::KcFuseElementwiseBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    getOperation()->walk(cloneCheapProducers);
    RewritePatternSet patterns(ctx);
    bool multi = multiUse;
    linalg::ControlFusionFn singleUse = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    OpOrder order(getOperation());
    patterns.add<FuseProducers>(ctx, multi, remarks, &order);
    addReshapeExpansionPatterns(patterns, singleUse);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, singleUse);
    GreedyRewriteConfig config = kcc::straightLineRewriteConfig();
    config.useTopDownTraversal = true;
    config.listener = &order;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                            config)))
      LLVM_DEBUG(llvm::dbgs() << "fusion did not converge\n");
    // A fused multi-use producer's preserved result can end up unused (its
    // other users fused later): drop it, or it stays a buffer and a store.
    RewritePatternSet cleanup(ctx);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(cleanup);
    // Splat constants read as inputs (relu's zeros, a gradient's ones)
    // become scalars in the body: otherwise each is a buffer the size of
    // the activation. The control function declines every fusion: only
    // the folding patterns that come with it run here.
    linalg::populateElementwiseOpsFusionPatterns(
        cleanup, [](OpOperand *) { return false; });
    (void)applyPatternsAndFoldGreedily(getOperation(), std::move(cleanup),
                                       kcc::straightLineRewriteConfig());
    if (!remarks)
      return;
    // The fusions the cost rule refused are exactly those still possible.
    getOperation()->walk([&](linalg::GenericOp consumer) {
      for (OpOperand &operand : consumer->getOpOperands())
        if (linalg::areElementwiseOpsFusable(&operand) &&
            shouldFuse(&operand, multi))
          if (const char *reason = costReason(&operand))
            consumer.emitRemark()
                << "not fused with operand #" << operand.getOperandNumber()
                << ": " << reason;
    });
  }
};

} // namespace

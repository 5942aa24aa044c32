//===- Passes.td - kc lowering and CPU codegen passes -*- tablegen -*-===//
//
// Passes that take kc out of its own dialect. Every pass has a kc- prefix;
// no `constructor`, so tablegen generates createXPass() and its options.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_PASSES_TD
#define KCC_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def KcLowerToLinalg : Pass<"kc-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers kc ops to linalg on tensors, GEMM/conv/pooling to "
                "library calls";
  let description = [{
    Rewrites every kc op into ops that one-shot bufferization understands:

    - elementwise, compare, select, cast, broadcast_to, random_uniform,
      one_hot, argmax, reductions and softmax become `linalg.generic` with
      `arith`/`math` bodies (so linalg's elementwise fusion can merge chains);
    - reshape, transpose, concat and slice become `tensor` reshapes,
      `linalg.transpose`, `tensor.insert_slice` and `tensor.extract_slice`;
    - matmul, conv2d (+ both backprops) and pooling (+ grads) become calls to
      the `kcc_rt_*` C entry points of runtime/jit/LibraryCalls.cpp, which
      run the kernel library (oneDNN):

    ```mlir
    %a = bufferization.to_memref %lhs : memref<32x784xf32>
    %out = memref.alloc() {alignment = 64 : i64} : memref<32x128xf32>
    func.call @kcc_rt_matmul_f32(%pa, %pb, %pout, %m, %n, %k, %ta, %tb) : ...
    %y = bufferization.to_tensor %out restrict writable : memref<32x128xf32>
    ```

    Library calls take bare pointers (`!llvm.ptr`) and i64 sizes, so their
    C signatures stay plain whatever calling convention the entry uses.

    The function arguments are marked `bufferization.writable = false`
    unless `writable-args` is set: a caller's arrays are inputs, and
    one-shot bufferization must not update them in place.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect"];
  let options = [
    Option<"writableArgs", "writable-args", "bool", /*default=*/"false",
           "let bufferization write into the function's argument buffers">,
  ];
  let statistics = [
    Statistic<"numLibraryCalls", "library-calls",
              "kc ops lowered to kcc_rt_* library calls">,
  ];
}

def KcWidenBF16 : Pass<"kc-widen-bf16", "mlir::ModuleOp"> {
  let summary = "Computes every bfloat16 kc op but the products in float32";
  let description = [{
    Mixed precision keeps tensors in bfloat16 between ops and computes in
    float32: an op with a bfloat16 operand or result (other than kc.cast,
    kc.reshape and the products, which run on oneDNN's bfloat16 kernels
    with float32 accumulation) reads its operands through `kc.cast` to f32,
    computes in f32 and rounds its result once through `kc.cast` back to
    bf16. The casts are elementwise, so kc-fuse-elementwise folds them into
    the loops around them: those loops load and store bfloat16 and compute
    in float32 registers, and reductions accumulate in float32. The
    interpreter runs each op the same way (engine/interpreter), so both
    round the same values.

    ```mlir
    %y = kc.add %a, %b : tensor<32x128xbf16>
    // becomes
    %0 = kc.cast %a : tensor<32x128xbf16> -> tensor<32x128xf32>
    %1 = kc.cast %b : tensor<32x128xbf16> -> tensor<32x128xf32>
    %2 = kc.add %0, %1 : tensor<32x128xf32>
    %y = kc.cast %2 : tensor<32x128xf32> -> tensor<32x128xbf16>
    ```
  }];
  let statistics = [
    Statistic<"numWidened", "widened-ops",
              "bfloat16 kc ops computed in float32">,
  ];
}

def KcExpandBF16 : Pass<"kc-expand-bf16"> {
  let summary = "Expands bfloat16 extf and truncf into integer arithmetic";
  let description = [{
    `arith.extf` from bf16 is a shift of the bits; `arith.truncf` to bf16
    rounds to nearest even with integer adds (a NaN stays a NaN), as
    runtime/kernels/FloatBits.h's bf16Of does, so no target feature
    (AVX512-BF16) and no soft-float library call is needed. MLIR's
    `arith::populateExpandBFloat16Patterns`, scalar or vector.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def KcPrepareOutParams : Pass<"kc-prepare-out-params", "mlir::ModuleOp"> {
  let summary = "Gives every returned buffer its own allocation before "
                "buffer-results-to-out-params";
  let description = [{
    After bufferization a function may return one of its arguments, or one
    buffer twice. buffer-results-to-out-params (with hoisted allocations)
    writes each result straight into the caller's buffer only when the
    result is an allocation of its own, and MLIR 19 crashes on a returned
    block argument. This pass copies such results into fresh allocations,
    which the hoisting then turns into the out-params themselves: one copy,
    never two.

    ```mlir
    return %arg0 : memref<4xf32>
    // becomes
    %0 = memref.alloc() : memref<4xf32>
    linalg.copy ins(%arg0 : memref<4xf32>) outs(%0 : memref<4xf32>)
    return %0 : memref<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def KcPlanMemory : Pass<"kc-plan-memory", "mlir::ModuleOp"> {
  let summary = "Places every intermediate buffer of a function in one "
                "static arena";
  let description = [{
    Runs on bufferized functions (after buffer-results-to-out-params, before
    the deallocation pipeline). Every statically shaped `memref.alloc` of a
    function's entry block whose lifetime the block decides (it is neither
    returned nor yielded) gets an offset in one `memref<Nxi8>` arena and is
    replaced by a `memref.view` of it. Live intervals run from a buffer's
    first to its last use, through views, casts and extracted pointers.
    Buffers are placed by decreasing size into the best-fitting gap among
    those with overlapping intervals (TFLite's greedy-by-size, XLA's heap
    simulator), at `alignment`-byte offsets; deallocations of planned
    buffers are dropped.

    ```mlir
    %0 = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
    // becomes (arena allocated once at the top, or the trailing argument)
    %c0 = arith.constant 0 : index
    %0 = memref.view %arena[%c0][] : memref<2048xi8> to memref<16x16xf32>
    ```

    The plan's totals (arena bytes, the lower bound = most bytes live at
    once, the unshared sum) are recorded as `kc.arena_*` attributes on the
    function (codegen/memory/MemoryPlan.h reads them) and, with `remarks`, emitted
    as a remark.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"arenaArg", "arena-arg", "bool", /*default=*/"false",
           "take the arena as a trailing memref<Nxi8> argument instead of "
           "allocating it per call">,
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "byte alignment of every offset">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "emit the plan as a remark on each function">,
  ];
}

def KcCountKernels : Pass<"kc-count-kernels", "mlir::ModuleOp"> {
  let summary = "Records each function's kernel count (library calls + "
                "top-level loop nests)";
  let description = [{
    An analysis that changes no op: counts the `kcc_rt_*` library calls and
    the top-level loop nests (linalg ops, scf/affine loops) of every function
    and stores them as `kc.kernels`, `kc.library_calls` and `kc.loop_nests`
    (codegen/pipeline/KernelCount.h reads them back). kc-cpu-pipeline runs it after
    bufferization, right before linalg becomes loops.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "emit the count as a remark on each function">,
  ];
}

def KcOutlineKernels : Pass<"kc-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Moves runs of kernels (loop nests, library calls) into "
                "private functions of their own";
  let description = [{
    Runs after kc-lower-loops. A function with more than 8 top-level kernels
    (`scf.for` / `scf.parallel` nests and library calls) has each run of up
    to 8 consecutive ones moved into `@<func>_kernel_<i>`, a private,
    internal function marked `no_inline` that takes the buffers and values
    the run reads (pure ops such as constants and memref views are cloned
    into it instead, so each memref argument is a plain buffer). LLVM then
    optimizes and schedules a bounded function at a time, which keeps
    compile time linear in the model's size.

    ```mlir
    func.func @train_step(%a: memref<64xf32>, ...) {
      scf.parallel (%i) = ... { ... %a ... }
      call @kcc_rt_matmul_f32(...)
      ... (9 kernels or more)
    }
    // becomes
    func.func @train_step(%a: memref<64xf32>, ...) {
      call @train_step_kernel_0(%a, ...) : (memref<64xf32>, ...) -> ()
      call @train_step_kernel_1(...) : (...) -> ()
    }
    func.func private @train_step_kernel_0(%a: memref<64xf32>, ...)
        attributes {no_inline, llvm.linkage = #llvm.linkage<internal>} {...}
    ```
  }];
  let options = [
    Option<"kernelsPerFunction", "kernels-per-function", "unsigned", "8",
           "The most kernels one outlined function holds: LLVM's scheduler "
           "sees a function's straight-line calls as one region whose "
           "dependence graph grows with the square of its size">,
    Option<"passPlacements", "pass-placements", "bool", "false",
           "Pass where buffers live (arena views, addresses into buffers) "
           "as arguments instead of cloning their computation, so that "
           "kernels doing the same work on different buffers come out "
           "identical (for kc-dedupe-kernels)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def KcMarkColdFunctions : Pass<"kc-mark-cold-functions", "mlir::func::FuncOp"> {
  let summary = "Marks functions that do little work per call kc.cold: their "
                "machine code is emitted unoptimized";
  let description = [{
    LLVM's instruction selection and register allocation are most of a
    large step's compile time, and they cost in proportion to the code,
    not to how often it runs. Most kernels of a network at a small batch
    or input run few iterations; the step's own function is straight-line
    calls. This pass estimates the work of one call of a function (each
    operation counted once per iteration of the static loops around it, a
    call counted once) and marks the function `kc.cold` when that is below
    `work`. aot::splitModule puts cold functions in parts of their own,
    emitted at CodeGenOptLevel::None (fast instruction selection, the fast
    register allocator) after the same IR pipeline as the others. The
    arithmetic is the same, so results are bit for bit those of the
    optimized code.

    A loop without constant bounds makes its function hot.
  }];
  let options = [
    Option<"work", "work", "int64_t", /*default=*/"0",
           "Operations executed per call (loop trip counts multiplied) "
           "below which a function is cold (0: none is)">,
  ];
}

def KcDedupeKernels : Pass<"kc-dedupe-kernels", "mlir::ModuleOp"> {
  let summary = "Keeps one of each set of identical outlined kernels";
  let description = [{
    Runs after kc-outline-kernels, which passes where each buffer lives
    (arena views, addresses) as arguments: kernels that do the same work on
    different buffers (a network's repeated blocks) then have identical
    bodies. Of each set of private `no_inline` functions that print the
    same apart from their names, the first stays and every call to the
    others calls it instead. LLVM then compiles each distinct kernel once.

    ```mlir
    call @step_kernel_0(%view0) : (memref<16xf32>) -> ()
    call @step_kernel_1(%view1) : (memref<16xf32>) -> ()
    // with identical bodies becomes
    call @step_kernel_0(%view0) : (memref<16xf32>) -> ()
    call @step_kernel_0(%view1) : (memref<16xf32>) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def KcLowerLoops : Pass<"kc-lower-loops", "mlir::ModuleOp"> {
  let summary = "Lowers linalg ops on buffers to loops, parallel where the "
                "work pays for a thread team";
  let description = [{
    Like convert-linalg-to-loops, but a linalg op whose iteration space has
    at least `parallel-threshold` points, only parallel dimensions (no
    reduction: see LowerLoops.cpp) and no enclosing parallel loop becomes an
    `scf.parallel` nest, for convert-scf-to-openmp to run on all cores. Smaller ops become serial
    `scf.for` nests: waking a team costs more than they do. A threshold of 0
    keeps every loop serial.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"parallelThreshold", "parallel-threshold", "int64_t",
           /*default=*/"65536",
           "iteration points from which a loop nest runs in parallel "
           "(0: never)">,
  ];
}

def KcFuseElementwise : Pass<"kc-fuse-elementwise"> {
  let summary = "Fuses linalg.generic producers into consumers, including "
                "producers with several users";
  let description = [{
    linalg-fuse-elementwise-ops with a wider control rule: a producer with
    several users is fused into an elementwise (all-parallel) consumer when
    none of its other users comes before the consumer; the fused op also
    yields the producer's value for them, so nothing is recomputed. This
    merges, e.g., Adam's m, v and parameter updates into one loop nest per
    parameter. With `multi-use=false` it is upstream's single-use rule.

    ```mlir
    %m = linalg.generic ... -> tensor<128xf32>      // returned, and used by %p
    %p = linalg.generic ins(%m, ...) -> tensor<128xf32>
    // becomes
    %m, %p = linalg.generic ... -> (tensor<128xf32>, tensor<128xf32>)
    ```

    Cost rule: a producer the consumer reads through a broadcast (a scalar
    feeding a tensor-wide loop, say) would be recomputed at every consumer
    iteration; such a fusion is refused when the producer computes math
    functions or divisions (Adam's `pow(beta, t)` would otherwise run once
    per parameter element). With `remarks`, each refusal is reported on
    the consumer with its reason.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"multiUse", "multi-use", "bool", /*default=*/"true",
           "fuse producers with several users into elementwise consumers">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "report each refused fusion as a remark with its reason">,
  ];
}

def KcFuseEpilogues : Pass<"kc-fuse-epilogues", "mlir::ModuleOp"> {
  let summary = "Fuses bias and activation after a GEMM or convolution "
                "into the library call";
  let description = [{
    Runs on linalg on tensors, after kc-fuse-elementwise. A
    `kcc_rt_matmul_*` or `kcc_rt_conv2d_*` call whose output feeds only one
    all-parallel linalg.generic that adds a bias along the last dimension
    and/or applies relu, tanh or sigmoid becomes one `kcc_rt_*_epilogue_*`
    call: oneDNN adds the bias inside the product and the runtime applies
    the activation to the output in place while it is still in cache, so
    the generic's pass over the output (a read and a write of every
    element) disappears and so does the pre-activation buffer. Activations
    whose gradient needs their input keep it alive and so never fuse.

    ```mlir
    call @kcc_rt_matmul_f32(%x, %w, %out, ...)
    %y = bufferization.to_tensor %out ...
    %h = linalg.generic ins(%y, %b : ...) { addf; math.tanh }
    // becomes (act: 0 none, 1 relu, 2 tanh, 3 sigmoid)
    call @kcc_rt_matmul_epilogue_f32(%x, %w, %bias, %out, ..., %has_bias, %act)
    ```

    With `remarks`, each fused epilogue is reported on its call.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "report each fused epilogue as a remark">,
  ];
}

def KcExpandMath : Pass<"kc-expand-math"> {
  let summary = "Expands f32 tanh, exp, expm1, log, log1p and erf into the "
                "kernel library's arithmetic";
  let description = [{
    Every f32 `math.tanh`, `math.exp`, `math.expm1`, `math.log`,
    `math.log1p` and `math.erf`, scalar or vector, becomes the arithmetic
    of runtime/kernels/Tanh.h, Exp.h, Log.h and Erf.h, op for op:
    tanh is Eigen's rational approximation (the one XLA's CPU backend
    uses); exp and expm1 a Cody-Waite reduction by k ln2 (k read from the
    bits of x / ln2 + 1.5 * 2^23), a polynomial by `math.fma` and 2^k built
    in the exponent bits (`arith.bitcast`, `arith.shli`); log and log1p
    fdlibm's split of the bits into 2^k m and its polynomial in
    (m - 1) / (m + 1); erf a polynomial near 0 and 1 - exp(polynomial)
    beyond. Selects give the infinities, the saturations and NaN.
    Each is within 2 ulp of the correctly rounded result.
    Compiled code then rounds as the interpreter does and the loops that
    hold these functions vectorize, where a libm call would be one call per
    lane. f64 keeps libm. Runs after kc-fuse-epilogues, which matches
    `math.tanh`, `math.exp`, `math.log` and `math.erf`.

    ```mlir
    %y = math.exp %x : vector<8xf32>
    // becomes: math.fma (the rounding to k and the reduction), math.fma x 5
    // (the polynomial), arith.bitcast / arith.shrsi / arith.shli (2^k),
    // arith.mulf, arith.cmpf / arith.select (+inf and 0)
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def KcSplitReductions : Pass<"kc-split-reductions"> {
  let summary = "Splits big sums over the outermost loop into parallel "
                "partial sums and a small combine";
  let description = [{
    Runs on linalg on tensors, after kc-fuse-elementwise. A linalg.generic
    whose outermost loop (the batch) and at least one inner loop are
    reductions, and whose every result is a sum, keeps kc-lower-loops and
    kc-fuse-loops serial. It becomes a generic with the outermost loop
    parallel writing one partial sum per outer index, and a generic adding
    the partial rows, in order, to the original accumulator. Only ops of
    at least `parallel-threshold` points split, and only when each partial
    element sums at least 8 points.

    ```mlir
    %s = linalg.generic {iterator_types = ["reduction", "reduction", "parallel"]}
           ins(%x : tensor<32x196x16xf32>) outs(%zero : tensor<16xf32>)
    // becomes
    %p = linalg.generic {iterator_types = ["parallel", "reduction", "parallel"]}
           ins(%x : tensor<32x196x16xf32>) outs(%zeros : tensor<32x16xf32>)
    %s = linalg.generic {iterator_types = ["reduction", "parallel"]}
           ins(%p : tensor<32x16xf32>) outs(%zero : tensor<16xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"parallelThreshold", "parallel-threshold", "int64_t",
           /*default=*/"65536",
           "iteration points from which a reduction splits (0: never)">,
  ];
}

def KcFuseLoops : Pass<"kc-fuse-loops", "mlir::ModuleOp"> {
  let summary = "Gives each run of consecutive linalg ops on buffers one "
                "loop: a fusion group, one kernel";
  let description = [{
    Runs after bufferization, before kc-plan-memory. Consecutive linalg ops
    (with only views, constants and allocations between them) become one
    `scf.for` tagged `kc.fusion`, of one of two kinds (see FuseLoops.cpp):

    - `rows`: ops sharing their outer (batch) loop; iteration i runs every
      op's row i. Every buffer two ops share, one writing it, must be
      accessed row-locally. Tiny ops of another shape (fills, scalars) run
      in the first iteration, or in the last when they read the group's
      results; a group with those, or with a reduction over the batch,
      is serial.
    - `horizontal`: independent elementwise ops over whole buffers (the
      optimizer's parameter updates), one loop over 8192-element chunks of
      all of them.

    A group whose iterations are independent and whose work reaches
    `parallel-threshold` is tagged `kc.parallel`: kc-lower-loops makes it
    an `scf.parallel`. An op that would serialize such a group is left
    out. With `remarks`, each group (its kind, op count, layers and the
    bytes of buffers used only inside it) and each refusal is reported.

    ```mlir
    linalg.generic {max over classes} ins(%logits) outs(%max)
    linalg.generic {exp-sum over classes} ins(%logits, %max) outs(%sum)
    // becomes
    scf.for %i = %c0 to %c64 step %c1 {
      scf.for %j ... { max }
      scf.for %j ... { exp-sum }
    } {kc.fusion = {kind = "rows", ops = 2 : i64, ...}}
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"parallelThreshold", "parallel-threshold", "int64_t",
           /*default=*/"65536",
           "iteration points from which a group runs on an OpenMP team">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "report each group and each refusal as a remark">,
  ];
}

def KcMarkInPlace : Pass<"kc-mark-in-place", "mlir::ModuleOp"> {
  let summary = "Proves which results may be written into their argument's "
                "buffer (in-place parameter and optimizer updates)";
  let description = [{
    Runs on bufferized functions after buffer-results-to-out-params and
    kc-fuse-loops. kc-prepare-out-params records the candidate pairs (a
    result and the argument with the same `kc.name`: a parameter, an
    optimizer slot, the step counter). A pair is proven when exactly one
    top-level op writes the out-param, nothing after it touches the
    argument, and inside it one elementwise linalg.generic reads the
    argument and writes the out-param at the same element. The proven pairs
    are recorded as `kc.in_place = array<i64: result, argument, ...>`; a
    caller may then pass the argument's buffer as that result's out-param.

    With `apply`, the function itself writes each proven result into its
    argument (the out-param stays in the signature, unused): LLVM then
    sees one buffer read and written at the same index and vectorizes the
    update, where two pointers that happen to be equal would fail its
    runtime overlap check and run the scalar loop.
  }];
  let options = [
    Option<"apply", "apply", "bool", /*default=*/"false",
           "write proven results into their arguments">,
  ];
}

def KcReuseBuffers : Pass<"kc-reuse-buffers", "mlir::ModuleOp"> {
  let summary = "Lets an elementwise op write its output over an input it "
                "reads for the last time";
  let description = [{
    Runs on bufferized functions, before kc-mark-in-place and kc-fuse-loops.
    An all-parallel linalg.generic whose output is a fresh `memref.alloc`
    (identity map, not read by the body) and which is the last user of an
    input allocation of the same type, read through an identity map, writes
    into that input instead; the output allocation goes. Every element is
    loaded before the same element is stored, so this is exact. It lowers
    peak memory where the arena planner cannot: the two buffers' lifetimes
    touch at this op.

    ```mlir
    %m = memref.alloc() : memref<64x26x26x32xf32>
    linalg.generic ins(%grad, %act : ...) outs(%m : ...)   // last use of %grad
    // becomes
    linalg.generic ins(%grad, %act : ...) outs(%grad : ...)
    ```
  }];
}

def KcOneShotBufferize : Pass<"kc-one-shot-bufferize", "mlir::ModuleOp"> {
  let summary = "One-Shot Bufferize with function boundaries, without the "
                "argument-result alias analysis";
  let description = [{
    One-Shot Bufferize of the whole module, function boundaries included, as
    MLIR's `one-shot-bufferize{bufferize-function-boundaries}` with identity
    layouts at the boundaries and copies as `linalg.copy`, without its
    per-function analysis of which result aliases which argument: that
    analysis compares every argument with every result (0.85 s of a
    400-layer step, whose thousands of parameters and optimizer slots are
    both), and only call sites use it.

    Where no call passes a tensor, the boundaries are bufferized first, as
    the module bufferization would: each tensor argument becomes a buffer of
    identity layout read through `bufferization.to_tensor` (restrict:
    arguments never alias; writable as its `bufferization.writable` says),
    each returned tensor is read through a read-only
    `bufferization.to_memref`; then the bodies are bufferized as one op.
    Anything else (a call with tensors, a declaration with a tensor
    signature) goes to the module bufferization.

    ```mlir
    func.func @f(%a: tensor<4xf32>) -> tensor<4xf32>
    // becomes
    func.func @f(%a: memref<4xf32>) -> memref<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def KcBufferDeallocation : Pass<"kc-buffer-deallocation", "mlir::ModuleOp"> {
  let summary = "The buffer-deallocation pipeline, when anything allocates";
  let description = [{
    MLIR's buffer-deallocation pipeline (memref-expand-realloc,
    ownership-based deallocation, its simplification and lowering, three
    canonicalizers and a CSE) where it has work to do. With kc-plan-memory's
    arena as an argument (every JIT compile) nothing is allocated any more,
    and the pipeline cost 10% of kc-cpu-pipeline doing nothing.

    When what is left are buffers allocated at the top of a straight-line
    function (the i1 masks kc-plan-memory does not place), none of them
    escaping (no memref is returned, yielded or produced by a call), this
    pass frees each one right before the return, in allocation order, as the
    pipeline would; anything else runs the pipeline.

    ```mlir
    %m = memref.alloc() : memref<4xi1>
    ...
    memref.dealloc %m : memref<4xi1>   // added
    return
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def KcFoldDescriptors : Pass<"kc-fold-descriptors", "mlir::LLVM::LLVMFuncOp"> {
  let summary = "Fold llvm.extractvalue of llvm.insertvalue chains, then "
                "erase dead ops";
  let description = [{
    The conversion to LLVM builds each memref value as an
    `llvm.insertvalue` chain of its pointers, offset, sizes and strides, and
    reads it back with `llvm.extractvalue` at every use. This pass folds each
    extract to the value inserted (static shapes: nearly all of them) and
    erases what is then dead, users before producers so that a chain dies in
    one sweep. On the fixtures this halved the LLVM dialect (mobilenet:
    27,000 to 12,000 lines), which LLVM IR translation and LLVM's
    InstCombine otherwise work through; a canonicalizer does the same at ten
    times the cost.

    ```mlir
    %d = llvm.insertvalue %p, %u[1] : !llvm.struct<(ptr, ptr, i64)>
    %q = llvm.extractvalue %d[1] : !llvm.struct<(ptr, ptr, i64)>
    // %q is replaced by %p; %d dies
    ```
  }];
}

#endif // KCC_CODEGEN_PASSES_TD

//===- ProductCalls.h - A step's products, timed alone ----------*- C++ -*-===//
//
// `kcc bench` reports how much of a compiled step is the kernel library's
// products (GEMM, batched GEMM, convolution and its two backward passes)
// and how much is kcc's own code around them. It records the f32 and bf16
// product calls one compiled step makes (the kcc_rt_* entry points report each
// one while a recording is alive) and replays them back to back, alone, with
// the step's shapes and attributes on scratch operands. Bias and relu stay in
// the replayed call, since the library computes them inside the product; the
// other fused activations are kcc's code and are left out.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_PRODUCTCALLS_H
#define KCC_RUNTIME_PRODUCTCALLS_H

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace kcc {
namespace rt {

/// One product call of a step, replayable on other buffers of its sizes.
struct ProductCall {
  /// Elements of the operands: a (or x), b (or the filter or gradient), the
  /// bias (0: none) and the output.
  std::array<int64_t, 4> elements = {0, 0, 0, 0};
  std::function<void(const float *a, const float *b, const float *bias,
                     float *out)>
      run;
};

/// While one is alive, the f32 and bf16 product calls compiled code makes (from
/// any thread) are recorded. One at a time per process.
class ProductCallRecording {
public:
  ProductCallRecording();
  ~ProductCallRecording();
  ProductCallRecording(const ProductCallRecording &) = delete;
  ProductCallRecording &operator=(const ProductCallRecording &) = delete;

  /// The calls recorded so far, in call order; the recording is emptied.
  std::vector<ProductCall> take();
};

/// Whether a recording is alive: the entry points' cheap test.
bool recordingProductCalls();
/// Adds `call` to the live recording (none: dropped).
void recordProductCall(ProductCall call);

/// The recorded calls replayed back to back on scratch operands, one buffer
/// per operand role sized for the largest call and filled with small values
/// once. Operands are then warmer in cache than in the step, so the time is
/// a lower bound of the products' share of the step.
class ProductCallReplay {
public:
  explicit ProductCallReplay(std::vector<ProductCall> calls);
  /// ms to run every call once.
  double runMs();
  size_t size() const { return calls.size(); }

private:
  std::vector<ProductCall> calls;
  std::array<std::vector<float>, 4> scratch;
};

} // namespace rt
} // namespace kcc

#endif // KCC_RUNTIME_PRODUCTCALLS_H

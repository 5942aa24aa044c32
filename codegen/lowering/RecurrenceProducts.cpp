//===- RecurrenceProducts.cpp - Products with U for the cells -------------===//
//
// Each product keeps a block of sums in registers across an scf.for (the
// iteration arguments of VectorBuilder::forAcc) and stores them once.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/RecurrenceProducts.h"

using namespace mlir;
using namespace kcc::codegen;
using namespace kcc::codegen::recurrence;

SmallVector<Value> recurrence::productBlock(VectorBuilder &vb,
                                            const RecurrenceSizes &dims,
                                            Value u, int64_t col0, Value c0,
                                            int64_t w, int64_t gates, int64_t K,
                                            Value lhs, ArrayRef<Value> lhsRow,
                                            SmallVector<Value> acc) {
  const int64_t rows = lhsRow.size(), H = dims.H, N = dims.N;
  return vb.forAcc(0, K, acc, [&](Value j, ValueRange a) {
    SmallVector<Value> uj, next;
    Value at = vb.add(vb.add(vb.mul(j, N), c0), col0);
    for (int64_t k = 0; k < gates; ++k)
      uj.push_back(vb.load(u, vb.add(at, k * H), w));
    for (int64_t r = 0; r < rows; ++r) {
      Value h = vb.splat(vb.scalar(lhs, vb.add(lhsRow[r], j)), w);
      for (int64_t k = 0; k < gates; ++k)
        next.push_back(vb.fma(h, uj[k], a[r * gates + k]));
    }
    return next;
  });
}

void recurrence::carryProduct(VectorBuilder &vb, const RecurrenceSizes &dims,
                              Value ut, int64_t utRow0, int64_t gates,
                              Value src, ArrayRef<Value> srcRow, Value dst,
                              ArrayRef<Value> dstRow, bool accumulate) {
  const int64_t rows = srcRow.size(), H = dims.H;
  vb.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    SmallVector<Value> acc(rows * gates, vb.constant(0.0, w));
    acc = vb.forAcc(0, H, acc, [&](Value j, ValueRange a) {
      SmallVector<Value> uj, next;
      for (int64_t k = 0; k < gates; ++k)
        uj.push_back(
            vb.load(ut, vb.add(vb.mul(vb.add(j, utRow0 + k * H), H), c0), w));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < gates; ++k) {
          Value z = vb.scalar(src, vb.add(vb.add(srcRow[r], k * H), j));
          next.push_back(vb.fma(vb.splat(z, w), uj[k], a[r * gates + k]));
        }
      return next;
    });
    for (int64_t r = 0; r < rows; ++r) {
      SmallVector<Value> sums(acc.begin() + r * gates,
                              acc.begin() + (r + 1) * gates);
      while (sums.size() > 1) {
        SmallVector<Value> pairs;
        for (size_t i = 0; i + 1 < sums.size(); i += 2)
          pairs.push_back(vb.fadd(sums[i], sums[i + 1]));
        if (sums.size() % 2)
          pairs.push_back(sums.back());
        sums = pairs;
      }
      Value at = vb.add(dstRow[r], c0);
      vb.store(accumulate ? vb.fadd(vb.load(dst, at, w), sums[0]) : sums[0],
               dst, at, w);
    }
  });
}

void recurrence::accumulateOuter(VectorBuilder &vb, const RecurrenceSizes &dims,
                                 Value lhs, Value lhsBase, Value lhsLd,
                                 Value src, Value srcBase, int64_t srcLd,
                                 int64_t cols, Value grad, Value dUCol) {
  const int64_t N = dims.N, B = dims.B;
  vb.forBlocks(dims.H, kGradRows, [&](Value k0, int64_t kc) {
    vb.forBlocks(cols, kLanes, [&](Value j0, int64_t w) {
      auto dUAt = [&](int64_t k) {
        return vb.add(vb.add(dUCol, vb.mul(vb.add(k0, k), N)), j0);
      };
      SmallVector<Value> acc;
      for (int64_t k = 0; k < kc; ++k)
        acc.push_back(vb.load(grad, dUAt(k), w));
      acc = vb.forAcc(0, B, acc, [&](Value bi, ValueRange a) {
        Value z =
            vb.load(src, vb.add(vb.add(srcBase, vb.mul(bi, srcLd)), j0), w);
        Value hp = vb.add(vb.add(lhsBase, vb.mul(bi, lhsLd)), k0);
        SmallVector<Value> next;
        for (int64_t k = 0; k < kc; ++k)
          next.push_back(
              vb.fma(vb.splat(vb.scalar(lhs, vb.add(hp, k)), w), z, a[k]));
        return next;
      });
      for (int64_t k = 0; k < kc; ++k)
        vb.store(acc[k], grad, dUAt(k), w);
    });
  });
}

void recurrence::accumulateColumnSums(VectorBuilder &vb,
                                      const RecurrenceSizes &dims, Value src,
                                      Value srcBase, int64_t srcLd, Value grad,
                                      Value dRb) {
  vb.forBlocks(dims.N, kLanes, [&](Value j0, int64_t w) {
    Value at = vb.add(dRb, j0);
    SmallVector<Value> acc{vb.load(grad, at, w)};
    acc = vb.forAcc(0, dims.B, acc, [&](Value bi, ValueRange a) {
      Value z = vb.load(src, vb.add(vb.add(srcBase, vb.mul(bi, srcLd)), j0), w);
      return SmallVector<Value>{vb.fadd(a[0], z)};
    });
    vb.store(acc[0], grad, at, w);
  });
}

SmallVector<Value> recurrence::rowsAt(VectorBuilder &vb, Value base, Value ld,
                                      Value b0, int64_t rows) {
  SmallVector<Value> at;
  for (int64_t r = 0; r < rows; ++r)
    at.push_back(vb.add(base, vb.mul(vb.add(b0, r), ld)));
  return at;
}

SmallVector<Value> recurrence::rowsAt(VectorBuilder &vb, Value base, int64_t ld,
                                      Value b0, int64_t rows) {
  return rowsAt(vb, base, vb.index(ld), b0, rows);
}

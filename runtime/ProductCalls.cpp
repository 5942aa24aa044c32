//===- ProductCalls.cpp - A step's GEMMs and convolutions, timed alone ----===//

#include "runtime/ProductCalls.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <utility>

using namespace kcc;
using namespace kcc::rt;

namespace {

std::atomic<bool> recording{false};
std::mutex recordedMutex;
std::vector<ProductCall> recorded;

} // namespace

ProductCallRecording::ProductCallRecording() {
  std::lock_guard<std::mutex> lock(recordedMutex);
  recorded.clear();
  recording.store(true, std::memory_order_release);
}

ProductCallRecording::~ProductCallRecording() {
  recording.store(false, std::memory_order_release);
  std::lock_guard<std::mutex> lock(recordedMutex);
  recorded.clear();
}

std::vector<ProductCall> ProductCallRecording::take() {
  std::lock_guard<std::mutex> lock(recordedMutex);
  return std::exchange(recorded, {});
}

bool rt::recordingProductCalls() {
  return recording.load(std::memory_order_relaxed);
}

void rt::recordProductCall(ProductCall call) {
  std::lock_guard<std::mutex> lock(recordedMutex);
  if (recording.load(std::memory_order_relaxed))
    recorded.push_back(std::move(call));
}

ProductCallReplay::ProductCallReplay(std::vector<ProductCall> calls)
    : calls(std::move(calls)) {
  std::array<int64_t, 4> largest = {0, 0, 0, 0};
  for (const ProductCall &c : this->calls)
    for (size_t i = 0; i < largest.size(); ++i)
      largest[i] = std::max(largest[i], c.elements[i]);
  // Small values of both signs: finite products, relu keeps about half.
  for (size_t i = 0; i < largest.size(); ++i) {
    scratch[i].resize(largest[i]);
    for (int64_t j = 0; j < largest[i]; ++j)
      scratch[i][j] =
          static_cast<float>((j * 7919 + int64_t(i)) % 17 - 8) / 64.0f;
  }
}

double ProductCallReplay::runMs() {
  auto start = std::chrono::steady_clock::now();
  for (const ProductCall &c : calls)
    c.run(scratch[0].data(), scratch[1].data(), scratch[2].data(),
          scratch[3].data());
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

//===- KillDuringSaveTest.cpp - SIGKILL mid-save keeps the old archive ----===//
//
// A child process saves an 8 MB model over one path in a loop, each save
// with every weight set to the save's number; the parent SIGKILLs it at a
// random moment. The file at the path must then be a complete archive
// written by one save (every weight holding the same number), never a mix
// or a torn file. Temporaries the kills leave behind show the kills did
// land mid-save.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/saving/SavingTestUtil.h"

#include "frontend/keras/Saving.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace kcc;
using namespace kcc::saving_test;

namespace {

Sequential makeWide() {
  return Sequential({Input({1024}), Dense(1024, "relu"), Dense(1024)}, "wide",
                    1);
}

keras::ModelState filledWith(Model &model, float value) {
  keras::ModelState state;
  for (NDArray w : model.getWeights()) {
    NDArray v = NDArray::empty(w.shape(), w.dtype());
    std::fill(v.data<float>(), v.data<float>() + v.numel(), value);
    state.weights.push_back(v);
  }
  state.epoch = static_cast<int64_t>(value);
  return state;
}

/// The number every weight of the archive at `path` holds; fails the test
/// unless they all hold the same one and it matches the saved epoch.
float savedNumber(const std::string &path) {
  keras::Checkpoint ckpt = keras::loadCheckpoint(path);
  std::vector<NDArray> ws = ckpt.imported.model->getWeights();
  float v = ws.at(0).data<float>()[0];
  for (const NDArray &w : ws)
    for (int64_t i = 0; i < w.numel(); i += 4099)
      EXPECT_EQ(w.data<float>()[i], v) << "an archive mixing two saves";
  EXPECT_EQ(ckpt.epoch, static_cast<int64_t>(v));
  return v;
}

TEST(KillDuringSave, ThePreviousArchiveSurvivesSigkill) {
  std::string dir = tempDir();
  std::string path = dir + "/ckpt.keras";
  Sequential model = makeWide();
  keras::saveKerasArchive(path, model, filledWith(model, 0), std::nullopt);
  std::mt19937 gen(12345);
  std::uniform_int_distribution<int> delayMs(20, 600);
  float last = 0;
  int rounds = 8;
  for (int round = 0; round < rounds; ++round) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        for (int k = 1;; ++k)
          keras::saveKerasArchive(path, model, filledWith(model, last + k),
                                  std::nullopt);
      } catch (...) {
        ::_exit(2);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs(gen)));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the saving child failed on its own (status " << status << ")";
    float now = savedNumber(path);
    EXPECT_GE(now, last);
    last = now;
  }
  int temporaries = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::StringRef(it->path()).contains(".kcc-tmp-"))
      ++temporaries;
  std::printf("%d kills, %d landed mid-save, %g saves completed\n", rounds,
              temporaries, last);
  EXPECT_GT(last, 0) << "no save completed before a kill";
  // The child does nothing but save, so kills land inside saves: without
  // one, the test would show nothing about a torn write.
  EXPECT_GT(temporaries, 0) << "no kill landed mid-save";
}

} // namespace

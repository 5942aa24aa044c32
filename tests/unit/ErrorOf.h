//===- ErrorOf.h - The message of the kcc::Error a call throws --*- C++ -*-===//
//
// Tests of diagnostics check the exact message: errorOf runs `fn`, returns
// the kcc::Error's message, and fails the test when nothing is thrown.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TESTS_UNIT_ERROROF_H
#define KCC_TESTS_UNIT_ERROROF_H

#include "runtime/Error.h"

#include "gtest/gtest.h"

#include <string>

namespace kcc {
namespace testing {

/// The message of the kcc::Error `fn` throws ("" and a failure if none).
template <typename Fn> std::string errorOf(Fn fn) {
  try {
    fn();
  } catch (const Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a kcc::Error";
  return "";
}

} // namespace testing
} // namespace kcc

#endif // KCC_TESTS_UNIT_ERROROF_H

// The layer registry as the command line shows it: a line per Keras class
// (family, class, what kcc reads of its config), the Markdown table of
// docs/frontend.md, and a located error for an unknown format.
// RUN: kcc --list-layers | FileCheck %s
// RUN: kcc --list-layers=markdown | FileCheck %s --check-prefix=MD
// RUN: not kcc --list-layers=html 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: core InputLayer
// CHECK: core Dense units, activation, use_bias
// CHECK: convolutional Conv2D
// CHECK: reshaping Permute dims
// CHECK: rnn LSTM
// CHECK: preprocessing Rescaling scale, offset

// MD: | class | family | what kcc reads |
// MD: | `Dense` | core | `units`, `activation`
// MD: | `Rescaling` | preprocessing |

// ERR: kcc: error: --list-layers=html: expected text or markdown

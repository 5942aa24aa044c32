// Hostile input: each is a clear error naming the file (and where in it),
// never a crash, a hang or more than 4 GB of address space. The inputs are
// made at test time by Inputs/hostile.py; %limit-as caps the address space
// at 4 GB (ulimit -v 4194304).
// RUN: rm -rf %t && mkdir -p %t/empty %t/huge
// RUN: python3 %S/Inputs/hostile.py deep-json 35000 %t/deep.json
// RUN: python3 %S/Inputs/hostile.py deep-mlir 50000 %t/deep.mlir
// RUN: python3 %S/Inputs/hostile.py chain 100000 %t/chain.json
// RUN: python3 %S/Inputs/hostile.py zip-lie %t/lie.keras
// RUN: python3 %S/Inputs/hostile.py idx-empty %t/empty
// RUN: python3 %S/Inputs/hostile.py idx-huge %t/huge
// RUN: mkfifo %t/pipe.mlir

// Nesting: JSON 35,000 deep and .mlir 50,000 deep overflowed the stack.
// RUN: not %limit-as kcc --emit=kc %t/deep.json 2>&1 | FileCheck %s --check-prefix=DEEP-JSON
// RUN: not %limit-as kcc --emit=kc %t/deep.mlir 2>&1 | FileCheck %s --check-prefix=DEEP-MLIR
// RUN: not %limit-as kcc-opt %t/deep.mlir 2>&1 | FileCheck %s --check-prefix=DEEP-MLIR
// DEEP-JSON: kcc: error: {{.*}}deep.json:1:513: JSON nested deeper than 512 levels
// DEEP-MLIR: deep.mlir:1:1053: error: brackets nested deeper than 1024 levels

// A functional chain of 100,000 layers imports and compiles to kc.
// RUN: %limit-as kcc --emit=kc %t/chain.json -o %t/chain.kc.mlir
// RUN: grep -c "kc.relu" %t/chain.kc.mlir | FileCheck %s --check-prefix=CHAIN
// CHAIN: 100000

// Sizes the file declares: a 127-byte .keras whose config.json says 200 MB.
// RUN: not %limit-as kcc --emit=kc %t/lie.keras 2>&1 | FileCheck %s --check-prefix=ZIP
// ZIP: kcc: error: {{.*}}lie.keras:config.json: declares 209715200 bytes from {{[0-9]+}} compressed ones; the archive is corrupt

// Inputs that never end: a device, stdin from a device, a pipe.
// RUN: not %limit-as kcc --emit=kc /dev/zero 2>&1 | FileCheck %s --check-prefix=DEVZERO
// RUN: not %limit-as kcc --emit=kc - < /dev/zero 2>&1 | FileCheck %s --check-prefix=STDIN
// RUN: not %limit-as kcc --emit=kc %t/pipe.mlir 2>&1 | FileCheck %s --check-prefix=FIFO
// RUN: not %limit-as kcc-opt %t/pipe.mlir 2>&1 | FileCheck %s --check-prefix=FIFO
// RUN: not %limit-as kcc-opt - < /dev/zero 2>&1 | FileCheck %s --check-prefix=STDIN
// DEVZERO: kcc: error: /dev/zero: not a regular file
// STDIN: stdin is larger than 256 MB, the limit for .mlir input
// FIFO: input file '{{.*}}pipe.mlir' is not a regular file

// A model file is bounded by the memory kcc may allocate, not by a fixed
// size (ConvNeXtXLarge's .keras is 1.4 GB): a sparse 1 TiB file is an
// error saying so, never a read until memory runs out.
// RUN: truncate -s 1T %t/huge.keras && truncate -s 1T %t/huge.h5
// RUN: not %limit-as kcc --emit=kc %t/huge.keras 2>&1 | FileCheck %s --check-prefix=BIGFILE
// RUN: not %limit-as kcc --emit=kc %t/huge.h5 2>&1 | FileCheck %s --check-prefix=BIGFILE
// BIGFILE: kcc: error: reading {{.*}}huge.{{keras|h5}} would need 1.0 TiB; {{.*}} are available ({{.*}})

// Datasets: no examples (a SIGFPE), a header declaring 2^31 x 2^31 x 2.
// RUN: not %limit-as kcc train --model=mlp --data-dir=%t/empty 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not %limit-as kcc train --model=mlp --data-dir=%t/huge 2>&1 | FileCheck %s --check-prefix=HUGE
// EMPTY: kcc: error: {{.*}}empty/train-images-idx3-ubyte.gz: no examples (images [0, 28, 28])
// HUGE: kcc: error: {{.*}}huge/train-images-idx3-ubyte.gz: the IDX header declares [2147483648, 2147483648, 2], more bytes than the {{[0-9]+}}-byte file holds

// Nothing half-written.
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// FILES-NOT: .tmp

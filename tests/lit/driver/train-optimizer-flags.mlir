// kcc train's optimizer flags override the spec's compile_config (the MLP's
// is Adam at 1e-3): the saved archive's compile config, which Keras reads
// back, carries the optimizer, its weight decay and clipping and the
// schedule the step trained with; a bad value is found before training.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:24,28,28,1 y=i8:24:labels:10
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/d.npz --batch 8 --epochs 1 --verbose 0 --optimizer adamw --weight-decay 0.01 --global-clipnorm 1 --lr-schedule 'CosineDecay(initial_learning_rate=0.01,decay_steps=10)' --save %t/adamw.keras
// RUN: python3 -c "import json, sys, zipfile; c = json.loads(zipfile.ZipFile(sys.argv[1]).read('config.json'))['compile_config']['optimizer']; print(json.dumps(c, sort_keys=True))" %t/adamw.keras | FileCheck %s --check-prefix=ADAMW
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/d.npz --batch 8 --epochs 1 --verbose 0 --optimizer nadam --lr 0.002 --clipvalue 0.5 --save %t/nadam.keras
// RUN: python3 -c "import json, sys, zipfile; c = json.loads(zipfile.ZipFile(sys.argv[1]).read('config.json'))['compile_config']['optimizer']; print(json.dumps(c, sort_keys=True))" %t/nadam.keras | FileCheck %s --check-prefix=NADAM
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/d.npz --optimizer adamw --clipnorm 1 --global-clipnorm 1 --save %t/bad.keras 2>&1 | FileCheck %s --check-prefix=BOTHCLIP
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/d.npz --optimizer adagrad --lr-schedule 'CosineDecay(initial_learning_rate=0.1)' --save %t/bad.keras 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not ls %t/bad.keras

// ADAMW: "class_name": "AdamW"
// ADAMW-SAME: "global_clipnorm": 1{{(\.0)?}},
// ADAMW-SAME: "learning_rate": {{{.*}}"class_name": "CosineDecay"{{.*}}"decay_steps": 10{{.*}}"initial_learning_rate": 0.01
// ADAMW-SAME: "weight_decay": 0.01

// NADAM: "class_name": "Nadam"
// NADAM-SAME: "clipvalue": 0.5
// NADAM-SAME: "learning_rate": 0.002

// BOTHCLIP: kcc: error:
// SCHEDULE: kcc: error: {{.*}}CosineDecay needs decay_steps

// Keras's optimizer arguments on kcc train's command line, under Keras's
// names: --optimizer switching away from the spec's Adam starts the new
// optimizer with its own Keras defaults (learning rate 0.01 for SGD, not
// the spec's 0.001); each argument is a flag (--beta-1 for beta_1), and the
// saved archive carries it with the type Keras checks (SGD's momentum a
// float: 0.0, never 0). A flag the optimizer has no argument for, or a
// near miss, is an error naming what is meant.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:16,28,28,1 y=i8:16:labels:10
// RUN: echo "import json, sys, zipfile; c = json.loads(zipfile.ZipFile(sys.argv[1]).read('config.json'))['compile_config']['optimizer']; print(c['class_name'], json.dumps(c['config'], sort_keys=True))" > %t/opt.py
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/d.npz --batch-size 8 --verbose 0 --optimizer=sgd --save %t/sgd.keras
// RUN: python3 %t/opt.py %t/sgd.keras | FileCheck %s --check-prefix=SGD
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/d.npz --batch 8 --verbose 0 --optimizer=sgd --momentum 0.9 --nesterov --learning-rate 0.05 --save %t/nesterov.keras
// RUN: python3 %t/opt.py %t/nesterov.keras | FileCheck %s --check-prefix=NESTEROV
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/d.npz --batch 8 --verbose 0 --beta-1 0.8 --beta-2 0.99 --epsilon 1e-6 --amsgrad --save %t/adam.keras
// RUN: python3 %t/opt.py %t/adam.keras | FileCheck %s --check-prefix=ADAM
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/d.npz --batch 8 --verbose 0 --optimizer rmsprop --rho 0.8 --momentum 0.5 --epsilon 1e-6 --centered --save %t/rmsprop.keras
// RUN: python3 %t/opt.py %t/rmsprop.keras | FileCheck %s --check-prefix=RMSPROP
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/d.npz --batch 8 --verbose 0 --optimizer adagrad --initial-accumulator-value 0.2 --save %t/adagrad.keras
// RUN: python3 %t/opt.py %t/adagrad.keras | FileCheck %s --check-prefix=ADAGRAD
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/d.npz --batch 8 --verbose 0 --optimizer lion --beta-1 0.95 --save %t/lion.keras
// RUN: python3 %t/opt.py %t/lion.keras | FileCheck %s --check-prefix=LION
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/d.npz --momentum 0.9 2>&1 | FileCheck %s --check-prefix=NOMOMENTUM
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/d.npz --optimizer=sgd --amsgrad 2>&1 | FileCheck %s --check-prefix=AMSGRAD
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/d.npz --learning_rate 0.1 2>&1 | FileCheck %s --check-prefix=NEAR
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/d.npz --beta1 0.8 2>&1 | FileCheck %s --check-prefix=NEARBETA

// SGD: SGD {{.*}}"learning_rate": 0.01{{[0-9]*}}, "loss_scale_factor": null, "momentum": 0.0, "name": "sgd", "nesterov": false
// NESTEROV: SGD {{.*}}"learning_rate": 0.05{{[0-9]*}}, {{.*}}"momentum": 0.9, "name": "sgd", "nesterov": true
// ADAM: Adam {"amsgrad": true, "beta_1": 0.8, "beta_2": 0.99, {{.*}}"epsilon": 1e-06, {{.*}}"learning_rate": 0.001{{[0-9]*}},
// RMSPROP: RMSprop {"centered": true, {{.*}}"epsilon": 1e-06, {{.*}}"learning_rate": 0.001{{[0-9]*}}, {{.*}}"momentum": 0.5, "name": "rm_sprop", "rho": 0.8,
// ADAGRAD: Adagrad {{.*}}"initial_accumulator_value": 0.2, "learning_rate": 0.001{{[0-9]*}},
// LION: Lion {"beta_1": 0.95, "beta_2": 0.99,

// NOMOMENTUM: kcc: error: {{.*}}--momentum: the adam optimizer has no such argument (sgd, rmsprop do)
// AMSGRAD: kcc: error: {{.*}}--amsgrad: the sgd optimizer has no such argument (adam, adamw do)
// NEAR: Did you mean '--learning-rate'?
// NEARBETA: Did you mean '--beta-1'?

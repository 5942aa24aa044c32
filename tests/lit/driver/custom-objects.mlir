// A .keras archive naming a custom object (Python code Keras loads by its
// registered name) is an error naming it and what replaces it: --loss for a
// loss, --metrics for metrics; with that flag the model trains. A custom
// layer stays an import error naming how a C++ program supplies it. The archives are
// written by scripts/keras-fixtures/make_custom_object_fixtures.py.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:8,4 y=f4:8,2
// RUN: not kcc train %kcc_src/tests/fixtures/keras/custom/loss_function.keras --data %t/d.npz 2>&1 | FileCheck %s --check-prefix=FN
// RUN: not kcc train %kcc_src/tests/fixtures/keras/custom/loss_class.keras --data %t/d.npz 2>&1 | FileCheck %s --check-prefix=CLS
// RUN: not kcc train %kcc_src/tests/fixtures/keras/custom/metric_function.keras --data %t/d.npz 2>&1 | FileCheck %s --check-prefix=METRIC
// RUN: not kcc train %kcc_src/tests/fixtures/keras/custom/layer.keras --data %t/d.npz 2>&1 | FileCheck %s --check-prefix=LAYER
// RUN: kcc train %kcc_src/tests/fixtures/keras/custom/loss_function.keras --data %t/d.npz --loss mse --verbose 2 2>&1 | FileCheck %s --check-prefix=LOSSFLAG
// RUN: kcc train %kcc_src/tests/fixtures/keras/custom/metric_function.keras --data %t/d.npz --metrics=binary_accuracy --verbose 2 2>&1 | FileCheck %s --check-prefix=METRICFLAG
// RUN: not ls %t/*.keras

// FN: loss_function.keras:config.json: $.compile_config.loss: compile_config: custom loss 'MyPackage>my_loss' is Python code, which kcc cannot run; give a built-in loss with --loss (sparse_categorical_crossentropy, categorical_crossentropy, binary_crossentropy, mean_squared_error, mean_absolute_error, mean_absolute_percentage_error, mean_squared_logarithmic_error, huber, log_cosh, poisson, kl_divergence, cosine_similarity, hinge, squared_hinge, categorical_hinge, binary_focal_crossentropy, categorical_focal_crossentropy, dice, tversky, ctc, categorical_generalized_cross_entropy, circle), or from C++ supply it in kcc::CompileOptions::customObjects
// CLS: loss_class.keras:config.json: $.compile_config.loss: compile_config: custom loss 'MyPackage>MyLoss' is Python code, which kcc cannot run; give a built-in loss with --loss
// METRIC: compile: custom metric 'MyPackage>my_metric' is Python code, which kcc cannot run; give built-in ones with --metrics, or from C++ supply it in kcc::CompileOptions::customObjects (for loss mean_squared_error: sparse_categorical_accuracy, {{.*}}, mean_squared_error, mape, msle, logcosh, cosine_similarity, kl_divergence, poisson, hinge, squared_hinge, categorical_hinge, binary_crossentropy, categorical_crossentropy, sparse_categorical_crossentropy, pearson_correlation, concordance_correlation, TruePositives, {{.*}}, RootMeanSquaredError, or a class with Keras's arguments, Class(key=value,...))
// LAYER: layer.keras:config.json: $.config.layers[1].registered_name: layer 'my_dense' (MyDense): custom layer 'MyPackage>MyDense' is Python code, which kcc cannot run; from C++ register a layer class for it with kcc::keras::registerLayerClass (examples/embed/custom_layer.cpp)

// LOSSFLAG: 1/1 - {{.*}} - loss: {{[0-9.]+}}{{$}}
// METRICFLAG: 1/1 - {{.*}} - loss: {{[0-9.]+}} - binary_accuracy: {{[0-9.]+}}{{$}}

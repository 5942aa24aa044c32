#!/usr/bin/env python3
#===- applications_sweep.py - Every keras.applications network, one step --===#
#
# Keras (from a throwaway venv, never the build's) writes each network's
# to_json() config with weights=None at its smallest input (32x32, 75x75 for
# the Inceptions, 71x71 for Xception) and 10 classes; `kcc bench` compiles
# its training step and runs one step compiled and one interpreted at batch
# 2. Prints a Markdown row per network: whether it trains, the compile time
# and the two steps (ms), or kcc's error.
#
#   KERAS_BACKEND=jax /tmp/kerasvenv/bin/python benchmarks/applications_sweep.py \
#       [--kcc build/bin/kcc]
#
#===----------------------------------------------------------------------===#
nets = ["ConvNeXtTiny","ConvNeXtSmall","ConvNeXtBase","ConvNeXtLarge","ConvNeXtXLarge",
 "DenseNet121","DenseNet169","DenseNet201",
 "EfficientNetB0","EfficientNetB1","EfficientNetB2","EfficientNetB3","EfficientNetB4","EfficientNetB5","EfficientNetB6","EfficientNetB7",
 "EfficientNetV2B0","EfficientNetV2B1","EfficientNetV2B2","EfficientNetV2B3","EfficientNetV2S","EfficientNetV2M","EfficientNetV2L",
 "InceptionResNetV2","InceptionV3","MobileNet","MobileNetV2","MobileNetV3Small","MobileNetV3Large",
 "NASNetMobile","NASNetLarge","ResNet50","ResNet101","ResNet152","ResNet50V2","ResNet101V2","ResNet152V2","VGG16","VGG19","Xception"]
size = {"InceptionResNetV2":75,"InceptionV3":75,"Xception":71,"NASNetLarge":32,"NASNetMobile":32}
print("| network | input | kcc | compile | compiled ms | interpreted ms |")
print("|---|---|---|---:|---:|---:|")
for n in nets:
    s = size.get(n, 32)
    try:
        m = getattr(keras.applications, n)(weights=None, input_shape=(s, s, 3), classes=10)
        open(n + ".json", "w").write(m.to_json())
    except Exception as e:
        print(f"| {n} | keras refused: {str(e)[:80]} |", flush=True); continue
    r = subprocess.run([KCC, "bench", n + ".json", "--batch", "2", "--repetitions", "1", "--steps", "1", "--warmup", "0", "--json"],
                       capture_output=True, text=True, env=dict(os.environ, KCC_CACHE_DIR="off"), timeout=600)
    if r.returncode == 0:
        d = json.loads(r.stdout)
        print(f"| {n} | {s}x{s} | trains | {d['compile_ms']/1000:.1f} s | {d['compiled_ms']:.1f} | {d['interpreted_ms']:.1f} |", flush=True)
    else:
        err = r.stderr.strip().splitlines()
        print(f"| {n} | {s}x{s} | failed (exit {r.returncode}): "
              f"{err[0][:160] if err else ''} |", flush=True)

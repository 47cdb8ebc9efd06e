# Modelled on a public TF 2.x speech-recognition command script (TensorSpeech/TensorFlowASR@b32c51dc2b0970dd769a8c4f15c82259780d2c64, run_stt.py; code-index id 47268455208): GPU memory growth and the float16 policy set at module level before the argument parser.
import argparse

import tensorflow as tf

gpus = tf.config.experimental.list_physical_devices("GPU")
if gpus:
    try:
        for gpu in gpus:
            tf.config.experimental.set_memory_growth(gpu, True)
    except RuntimeError as error:
        print(error)

    policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16")
    tf.keras.mixed_precision.experimental.set_policy(policy)

MODES = ["train", "train_builtin", "test", "infer", "save"]

parser = argparse.ArgumentParser(description="ASR commands")
parser.add_argument("--mode", "-m", type=str, choices=MODES, default="train")


def main(args, run):
    return run(args.mode)


if __name__ == "__main__":
    main(parser.parse_args(), print)

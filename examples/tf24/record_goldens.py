"""Runs each TF 2.4-era example program (or those named: `record_goldens.py NAME...`) on TensorFlow 2.4.0 and writes
goldens/<name>.json."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = ("custom_loop", "fit", "fixed_scale", "dynamic_loss_scale_object",
            "legacy_names", "policy_fit", "mirrored", "restore_checkpoint", "load_weights", "global_step",
            "hyperparameters", "fit_full_epochs",
            # Programs modelled on public TF 2.4-era training code (each names the repository and commit).
            "real_mp_guide", "real_resnet_ctl", "real_transformer_rewrite", "real_efficientdet", "real_deblur_gan",
            "real_classifier_trainer", "real_albert_accumulation",
            "real_dreamer_optimizer", "real_tts_trainer", "real_opennmt_trainer", "real_model_garden_trainer")
# Extra flags for the recording run: these first write the TF 2.4.0 checkpoints they resume from.
RECORDING_FLAGS = {"restore_checkpoint": ["--write-checkpoint"], "load_weights": ["--write-checkpoint"]}


def main():
    """Records every program's golden; refuses to run on any TensorFlow but 2.4.0."""
    import tensorflow as tf

    if tf.__version__ != "2.4.0":
        sys.exit("record_goldens.py must run on TensorFlow 2.4.0, not %s" % tf.__version__)
    for name in sys.argv[1:] or PROGRAMS:
        if name not in PROGRAMS:
            sys.exit("no example program %r; the programs are: %s" % (name, ", ".join(PROGRAMS)))
        golden = os.path.join(HERE, "goldens", name + ".json")
        subprocess.run([sys.executable, os.path.join(HERE, name + ".py"), "--json", golden,
                        *RECORDING_FLAGS.get(name, [])], check=True)
        print("wrote", os.path.relpath(golden))
    return 0


if __name__ == "__main__":
    sys.exit(main())

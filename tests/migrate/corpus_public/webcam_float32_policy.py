# Modelled on a public TF 2.x webcam detector demo (code-index id 33093315529; the index names no repository or path for it, and it is not yet traced to one): `main` sets a float32 policy (float16 left as a comment) before building the model and looping over frames.
import cv2
import tensorflow as tf


def build_model():
    return tf.keras.applications.MobileNetV2(weights=None)


def process_image(frame, model):
    batch = tf.image.resize(frame[None], (224, 224)) / 255.0
    return model(batch, training=False)


def main():
    # 'mixed_float16' on GPUs, 'float32' on CPU
    policy = tf.keras.mixed_precision.experimental.Policy("float32")
    tf.keras.mixed_precision.experimental.set_policy(policy)
    model = build_model()
    capture = cv2.VideoCapture(0)
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        process_image(frame, model)
    capture.release()


if __name__ == "__main__":
    main()

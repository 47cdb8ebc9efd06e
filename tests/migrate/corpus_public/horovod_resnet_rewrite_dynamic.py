# Modelled on a public Horovod TF 2.x ResNet-50 `fit` benchmark (code-index id 18260524687; the index names no repository or path for it, and it is not yet traced to one): the graph rewrite with `loss_scale='dynamic'` under a flag, then Horovod's distributed optimizer, compile and fit.
import horovod.tensorflow.keras as hvd
import tensorflow as tf


def main(flags, dataset):
    hvd.init()
    model = tf.keras.applications.ResNet50(weights=None, classes=1000)
    opt = tf.keras.optimizers.SGD(learning_rate=flags.learning_rate * hvd.size(), momentum=flags.momentum)
    if not flags.fp32:
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic")
    opt = hvd.DistributedOptimizer(opt)

    loss_func = tf.keras.losses.SparseCategoricalCrossentropy()
    callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0)]
    if hvd.rank() == 0:
        callbacks.append(tf.keras.callbacks.ModelCheckpoint("./checkpoint-{epoch}.h5"))
    model.compile(loss=loss_func, optimizer=opt, experimental_run_tf_function=False)
    model.fit(dataset, steps_per_epoch=100 // hvd.size(), callbacks=callbacks, epochs=flags.epochs)

# Modelled on two public world-model trainers seen through the code index (`find_string` ids 15998430485 and
# 27264900710; the index names no repository): the experimental module imported as `prec` and read only for the
# policy's compute dtype, inside a lambda kept on the instance and in plain methods.
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as prec


class Recurrent(tf.Module):
    def __init__(self, stoch=30, deter=200):
        super().__init__()
        self._stoch = stoch
        self._cell = tf.keras.layers.GRUCell(deter)
        self._cast = lambda x: tf.cast(x, prec.global_policy().compute_dtype)

    def initial(self, batch_size):
        dtype = prec.global_policy().compute_dtype
        return {
            "stoch": tf.zeros([batch_size, self._stoch], dtype),
            "deter": self._cell.get_initial_state(None, batch_size, dtype),
        }

    def step(self, state, action):
        return tf.concat([self._cast(state["stoch"]), self._cast(action)], -1)

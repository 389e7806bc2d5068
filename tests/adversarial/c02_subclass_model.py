# class: 2 ModelNew(Model) with an empty body
# task: bias_relu_scale
# expect: fail integrity
import sys

Model = [m for m in list(sys.modules.values())
         if isinstance(getattr(m, "Model", None), type) and callable(getattr(m, "get_init_inputs", None))][0].Model


class ModelNew(Model):
    pass

"""PyTorch's optimizer base, as far as the step hook uses it: global step post-hooks (torch 2.x's
register_optimizer_step_post_hook), called after every subclass's step(), in registration order."""
import functools
from collections import OrderedDict

_global_optimizer_post_hooks = OrderedDict()


class _Handle:
    def __init__(self, hooks, key):
        self._hooks, self._key = hooks, key

    def remove(self):
        self._hooks.pop(self._key, None)


def register_optimizer_step_post_hook(hook):
    key = len(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[key] = hook
    return _Handle(_global_optimizer_post_hooks, key)


class Optimizer:
    def __init__(self, params, defaults):
        self.params, self.defaults = list(params), defaults

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is None:
            return

        @functools.wraps(step)
        def wrapper(self, *args, **kwargs):
            out = step(self, *args, **kwargs)
            for hook in list(_global_optimizer_post_hooks.values()):
                hook(self, (self,) + args, kwargs)
            return out

        cls.step = wrapper

"""DefaultBinder (plugins/defaultbinder): binds the pod to its node through the API. Here the
binding is the loop's `binder` callback (default: it succeeds), called when no Bind plugin
before it claimed the pod."""


class DefaultBinder:
    name = "DefaultBinder"

    def __init__(self, args=None, handle=None):
        pass

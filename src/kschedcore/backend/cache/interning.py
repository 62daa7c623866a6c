"""String interning: the kernels see integer ids, never strings."""


class Interner:
    """Maps strings (or any hashable) to dense ids 0, 1, 2, ... in first-seen order."""

    __slots__ = ("ids", "items")

    def __init__(self, initial=()):
        self.ids = {}
        self.items = []
        for item in initial:
            self.intern(item)

    def intern(self, item) -> int:
        i = self.ids.get(item)
        if i is None:
            i = self.ids[item] = len(self.items)
            self.items.append(item)
        return i

    def get(self, item, default=-1) -> int:
        return self.ids.get(item, default)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

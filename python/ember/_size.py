"""ember.Size: a tensor's shape, a tuple that prints as ember.Size([2, 3]) (torch.Size)."""


class Size(tuple):
    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return "ember.Size([" + ", ".join(str(s) for s in self) + "])"

    def __getitem__(self, key):
        item = super().__getitem__(key)
        return Size(item) if isinstance(key, slice) else item

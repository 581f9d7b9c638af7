"""ember.nn.utils.rnn: packed and padded sequences, as torch.nn.utils.rnn. A PackedSequence holds
the steps of sequences of different lengths batch-major per time step (batch_sizes[t] sequences
take step t); ember's recurrent layers read it with its lengths."""
from collections import namedtuple

from ... import _C
from ..._missing import missing

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpack_sequence", "unpad_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as PyTorch's."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes,
                                                         self.sorted_indices,
                                                         self.unsorted_indices)

    def cpu(self):
        return self.to("cpu")

    @property
    def is_cuda(self):
        return self.data.is_cuda


def _invert(permutation):
    out = _C._ops.empty_like(permutation)
    out.scatter_(0, permutation, _C._ops.arange(permutation.numel(), device=permutation.device))
    return out


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *)) of sequences of the given lengths."""
    lengths = _C.as_tensor(lengths, dtype=_C.int64).cpu()
    if enforce_sorted:
        if lengths.numel() > 1 and bool((lengths[:-1] < lengths[1:]).any()):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                               "pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        lengths, sorted_indices = _C._ops.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    lens = lengths.tolist()
    if lens and min(lens) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    T = lens[0] if lens else 0
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(T)]
    data = _C._ops.cat([input[t, :b] for t, b in enumerate(batch_sizes)]) if T else input[:0, 0]
    return PackedSequence(data, _C.tensor(batch_sizes, dtype=_C.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """(padded (T, B, *) or (B, T, *), lengths): the inverse of pack_padded_sequence."""
    data, batch_sizes = sequence.data, sequence.batch_sizes.tolist()
    B = batch_sizes[0] if batch_sizes else 0
    T = len(batch_sizes)
    if total_length is not None:
        if total_length < T:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {T}")
        T = total_length
    out = _C._ops.full((T, B) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                       device=data.device)
    rows, offset = [], 0
    for t, b in enumerate(batch_sizes):
        rows.append((t, b, offset))
        offset += b
    # Steps as one scatter: each packed row's (time, batch) position.
    if rows:
        time_idx = _C.tensor([t for t, b, _ in rows for _ in range(b)], dtype=_C.int64)
        batch_idx = _C.tensor([i for t, b, _ in rows for i in range(b)], dtype=_C.int64)
        out = _put(out, time_idx, batch_idx, data)
    lengths = _C.tensor([sum(1 for b in batch_sizes if b > i) for i in range(B)], dtype=_C.int64)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    if batch_first:
        out = out.transpose(0, 1)
    return out, lengths


def _put(out, time_idx, batch_idx, data):
    # out[time, batch] = data through a differentiable scatter over the flattened (T*B) rows.
    T, B = out.shape[0], out.shape[1]
    flat = out.reshape((T * B,) + tuple(out.shape[2:]))
    rows = (time_idx * B + batch_idx).to(out.device)
    index = rows.reshape((-1,) + (1,) * (data.dim() - 1)).expand(data.shape)
    return flat.scatter(0, index, data).reshape(out.shape)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences of different lengths (L_i, *) into (T, B, *) (or (B, T, *))."""
    if isinstance(sequences, _C.Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    T = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        pad_len = T - s.size(0)
        if pad_len:
            fill = _C._ops.full((pad_len,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype,
                                device=s.device)
            s = _C._ops.cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    out = _C._ops.stack(padded, 0 if batch_first else 1)
    return out


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences (L_i, *)."""
    lengths = _C.tensor([s.size(0) for s in sequences], dtype=_C.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return [padded[i, :n] for i, n in enumerate(lengths.tolist())]


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_C.as_tensor(lengths).tolist())]


__getattr__ = missing(__name__)

"""Summaries as torch.utils.tensorboard.summary makes them (scalar, histogram, text), returned as
encoded Summary protocol buffers."""
import numpy as np

from ... import _C
from . import _proto


def make_np(x):
    """`x` as a NumPy array: an ember tensor, a NumPy array, a Python or NumPy scalar, or a list."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, _C.Tensor):
        return x.detach().cpu().numpy()
    if np.isscalar(x) and not isinstance(x, (str, bytes)):
        return np.array([x])
    if isinstance(x, (list, tuple)):
        return np.asarray(x)
    raise NotImplementedError(
        "Got {}, but numpy array, ember tensor, number or list are expected.".format(type(x)))


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """A Summary of one scalar: simple_value, or (new_style) a tensor for the scalars plugin."""
    tensor = make_np(tensor).squeeze()
    assert tensor.ndim == 0, (f"Tensor should contain one element (0 dimensions). Was given size: "
                              f"{tensor.size} and {tensor.ndim} dimensions.")
    value = float(tensor)
    if not new_style:
        return _proto.summary(_proto.summary_value(name, simple_value=value))
    if double_precision:
        proto = _proto.tensor(_proto.DT_DOUBLE, double_val=[value])
    else:
        proto = _proto.tensor(_proto.DT_FLOAT, float_val=[value])
    return _proto.summary(_proto.summary_value(
        name, tensor=proto, metadata=_proto.summary_metadata('scalars')))


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    """A Summary of a histogram given by its statistics and buckets."""
    histo = _proto.histogram(min, max, num, sum, sum_squares, [float(b) for b in bucket_limits],
                             [float(c) for c in bucket_counts])
    return _proto.summary(_proto.summary_value(name, histo=histo))


def histogram(name, values, bins, max_bins=None):
    """A Summary of the histogram of `values` (any shape) over `bins` (edges or NumPy's rule)."""
    values = make_np(values)
    return _proto.summary(_proto.summary_value(
        name, histo=make_histogram(values.astype(float), bins, max_bins)))


def make_histogram(values, bins, max_bins=None):
    """An encoded HistogramProto: NumPy's histogram cut to the support of the data, as
    TensorBoard's histogram.cc (right bucket limits, with one empty bucket in front)."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    num_bins = len(counts)
    if max_bins is not None and num_bins > max_bins:
        # Merge runs of `subsampling` bins, padding the last run with empty ones.
        subsampling = num_bins // max_bins
        remainder = num_bins % subsampling
        if remainder != 0:
            counts = np.pad(counts, pad_width=[[0, subsampling - remainder]], mode="constant",
                            constant_values=0)
        counts = counts.reshape(-1, subsampling).sum(axis=-1)
        merged = np.empty((counts.size + 1,), limits.dtype)
        merged[:-1] = limits[:-1:subsampling]
        merged[-1] = limits[-1]
        limits = merged
    # The first and one past the last bin with a count. (Torch 1.13 passes dtype=np.int32 to
    # np.greater, which NumPy 1.24 rejects; the counts of nonzero bins are the same without.)
    cum_counts = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum_counts, [0, cum_counts[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    # TensorBoard reads right limits only: an empty bucket in front keeps the left edge.
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return _proto.histogram(min=float(values.min()), max=float(values.max()), num=len(values),
                            sum=float(values.sum()), sum_squares=float(values.dot(values)),
                            bucket_limit=limits.tolist(),
                            bucket=[float(c) for c in counts.tolist()])


def text(tag, text):
    """A Summary of a string for the text plugin, under `tag + '/text_summary'`."""
    tensor = _proto.tensor(_proto.DT_STRING, shape=[1], string_val=[text.encode("utf_8")])
    return _proto.summary(_proto.summary_value(
        tag + "/text_summary", tensor=tensor, metadata=_proto.summary_metadata("text")))

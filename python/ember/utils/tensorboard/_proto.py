"""The few TensorBoard protocol buffers SummaryWriter writes (Event, Summary, HistogramProto,
TensorProto), encoded by hand in the protobuf wire format, so neither protobuf nor TensorBoard is
needed. Field numbers are those of tensorflow/core/{util/event,framework/summary,framework/tensor}
.proto. As protobuf does for proto3, a plain field at its default (0, '', empty) is left out and
a oneof member is always written; fields come in number order, so the bytes equal protobuf's."""
import struct

# Wire types.
_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5

# tensorflow.DataType values.
DT_FLOAT, DT_DOUBLE, DT_STRING = 1, 2, 7

# SessionLog.SessionStatus values.
SESSION_START = 1


def _varint(n):
    n &= (1 << 64) - 1  # negative int64s take ten bytes, as two's complement
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _key(field, wire_type):
    return _varint(field << 3 | wire_type)


def _double(field, value, always=False):
    data = struct.pack('<d', value)
    # proto3 skips a zero by its bits: -0.0 is written.
    if not always and data == bytes(8):
        return b''
    return _key(field, _FIXED64) + data


def _float(field, value, always=False):
    data = struct.pack('<f', value)
    if not always and data == bytes(4):
        return b''
    return _key(field, _FIXED32) + data


def _int(field, value, always=False):
    if not always and value == 0:
        return b''
    return _key(field, _VARINT) + _varint(value)


def _bytes(field, value, always=False):
    if isinstance(value, str):
        value = value.encode('utf-8')
    if not always and not value:
        return b''
    return _key(field, _LEN) + _varint(len(value)) + value


def _packed(field, fmt, values):
    if not values:
        return b''
    return _bytes(field, struct.pack('<%d%s' % (len(values), fmt), *values))


def event(wall_time, step=0, file_version=None, summary=None, session_log=None):
    """An Event: wall_time 1, step 2, and one of file_version 3, summary 5, session_log 7."""
    out = _double(1, wall_time) + _int(2, step)
    if file_version is not None:
        out += _bytes(3, file_version, always=True)
    if summary is not None:
        out += _bytes(5, summary, always=True)
    if session_log is not None:
        out += _bytes(7, session_log, always=True)
    return out


def session_log(status):
    """A SessionLog: status 1."""
    return _int(1, status)


def summary(*values):
    """A Summary of encoded Summary.Values (repeated field 1)."""
    return b''.join(_bytes(1, v, always=True) for v in values)


def summary_value(tag, simple_value=None, histo=None, tensor=None, metadata=None):
    """A Summary.Value: tag 1, then one of simple_value 2, histo 5, tensor 8; metadata 9."""
    out = _bytes(1, tag)
    if simple_value is not None:
        out += _float(2, simple_value, always=True)
    if histo is not None:
        out += _bytes(5, histo, always=True)
    if tensor is not None:
        out += _bytes(8, tensor, always=True)
    if metadata is not None:
        out += _bytes(9, metadata, always=True)
    return out


def summary_metadata(plugin_name, content=b''):
    """A SummaryMetadata whose plugin_data (1) is PluginData(plugin_name 1, content 2)."""
    return _bytes(1, _bytes(1, plugin_name) + _bytes(2, content), always=True)


def histogram(min, max, num, sum, sum_squares, bucket_limit, bucket):
    """A HistogramProto: min 1, max 2, num 3, sum 4, sum_squares 5 (doubles), bucket_limit 6 and
    bucket 7 (packed doubles)."""
    return (_double(1, min) + _double(2, max) + _double(3, num) + _double(4, sum)
            + _double(5, sum_squares) + _packed(6, 'd', bucket_limit) + _packed(7, 'd', bucket))


def tensor(dtype, shape=None, float_val=(), double_val=(), string_val=()):
    """A TensorProto: dtype 1, tensor_shape 2 (TensorShapeProto, dims 2 of Dim(size 1)),
    float_val 5 and double_val 6 (packed), string_val 8 (repeated bytes)."""
    out = _int(1, dtype)
    if shape is not None:
        dims = b''.join(_bytes(2, _int(1, size), always=True) for size in shape)
        out += _bytes(2, dims, always=True)
    out += _packed(5, 'f', list(float_val)) + _packed(6, 'd', list(double_val))
    out += b''.join(_bytes(8, s, always=True) for s in string_val)
    return out

"""TensorBoard's event files: TFRecord framing with CRC-32C checksums, and the writer of one
`events.out.tfevents.*` file. Each record is
    uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)
little-endian, and a file's first record is an Event with file_version "brain.Event:2"."""
import itertools
import os
import socket
import struct
import threading
import time
import weakref

from . import _proto


def _crc32c_table():
    # Reflected Castagnoli polynomial 0x1EDC6F41.
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_CRC32C_TABLE = _crc32c_table()


def crc32c(data, crc=0):
    """The CRC-32C (Castagnoli) of `data`, continuing from `crc`."""
    table = _CRC32C_TABLE
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """TFRecord's masked CRC: rotated and offset, so a CRC of data holding CRCs stays strong."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def encode_record(data):
    """One TFRecord: the framed and checksummed `data`."""
    header = struct.pack('<Q', len(data))
    return (header + struct.pack('<I', masked_crc32c(header)) + data
            + struct.pack('<I', masked_crc32c(data)))


# The last number of an event file's name, unique within the process (TensorBoard's _global_uid).
_file_numbers = itertools.count()
_file_numbers_lock = threading.Lock()


class EventFileWriter:
    """Appends encoded Events as records to a new event file in `logdir`. Writes go through a
    buffered file, flushed by flush(), close(), every max_queue events or flush_secs seconds,
    and at exit."""

    def __init__(self, logdir, max_queue=10, flush_secs=120, filename_suffix=''):
        self._logdir = str(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        with _file_numbers_lock:
            number = next(_file_numbers)
        name = 'events.out.tfevents.%010d.%s.%s.%s' % (time.time(), socket.gethostname(),
                                                       os.getpid(), number)
        self._path = os.path.join(self._logdir, name) + filename_suffix
        self._file = open(self._path, 'wb')
        # A writer never closed still leaves a complete file (TensorBoard's writer thread would).
        self._finalizer = weakref.finalize(self, self._file.close)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._pending = 0
        self._last_flush = time.time()
        self._lock = threading.Lock()
        self.add_event(_proto.event(wall_time=time.time(), file_version='brain.Event:2'))
        self.flush()

    def get_logdir(self):
        """The directory of the event file."""
        return self._logdir

    def get_filename(self):
        """The event file's path."""
        return self._path

    def add_event(self, event):
        """Writes one encoded Event."""
        record = encode_record(event)
        with self._lock:
            if self._file.closed:
                raise IOError('Writer is closed')
            self._file.write(record)
            self._pending += 1
            if (self._pending >= self._max_queue
                    or time.time() - self._last_flush >= self._flush_secs):
                self._flush_locked()

    def flush(self):
        """Writes what is buffered to the file."""
        with self._lock:
            if not self._file.closed:
                self._flush_locked()

    def _flush_locked(self):
        self._file.flush()
        self._pending = 0
        self._last_flush = time.time()

    def close(self):
        """Flushes and closes the file; later add_event calls raise."""
        with self._lock:
            self._finalizer()

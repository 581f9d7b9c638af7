"""SummaryWriter and FileWriter, as torch.utils.tensorboard's: the same directories, file names,
records and arguments. Summaries are encoded by ember (summary.py, _proto.py) instead of by
protobuf; what torch builds from images, figures, audio, video, graphs, embeddings, meshes,
PR curves and hparams is not written yet (those methods raise NotImplementedError)."""
import os
import socket
import time
from datetime import datetime

from . import _proto
from ._record import EventFileWriter
from .summary import histogram, histogram_raw, scalar, text

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes Events to one event file in log_dir (a new file per FileWriter)."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        """The directory where the event file is written."""
        return self.event_writer.get_logdir()

    def add_event(self, step=None, walltime=None, **what):
        """Writes an Event holding `what` (file_version=, summary= or session_log=, encoded),
        at `walltime` (default now) and `step`."""
        wall_time = time.time() if walltime is None else walltime
        # int(): the step may be a NumPy or tensor scalar.
        step = 0 if step is None else int(step)
        self.event_writer.add_event(_proto.event(wall_time, step, **what))

    def add_summary(self, summary, global_step=None, walltime=None):
        """Writes an encoded Summary (see ember.utils.tensorboard.summary) as an Event."""
        self.add_event(global_step, walltime, summary=summary)

    def flush(self):
        """Writes buffered events to disk."""
        self.event_writer.flush()

    def close(self):
        """Flushes and closes the event file."""
        self.event_writer.close()


def _default_bins():
    # TensorBoard's default bucket limits (generate_testdata.py): +-1e-12 growing by 10% to
    # 1e20, and 0.
    v = 1e-12
    buckets = []
    neg_buckets = []
    while v < 1e20:
        buckets.append(v)
        neg_buckets.append(-v)
        v *= 1.1
    return neg_buckets[::-1] + [0] + buckets


class SummaryWriter:
    """Writes scalars, histograms and text to TensorBoard event files under log_dir (default
    runs/<date>_<host><comment>)."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        # Made here, and again by the first add_* after close().
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self):
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # A restarted run: TensorBoard hides the events from purge_step on.
                step = self.purge_step
                self.file_writer.add_event(step, file_version="brain.Event:2")
                self.file_writer.add_event(step,
                                           session_log=_proto.session_log(_proto.SESSION_START))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory where event files are written."""
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Adds one value (a number or a one-element tensor or array) to the plot `tag`."""
        summary = scalar(tag, scalar_value, new_style=new_style,
                         double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Adds several values to one plot: each key of the dict is a run of its own, in the
        directory log_dir/<main_tag>_<key>."""
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(scalar(main_tag, scalar_value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Adds the histogram of `values` (tensor, array or list); bins is 'tensorflow'
        (TensorBoard's exponential buckets), a NumPy rule ('auto', 'fd', ...) or edges."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(histogram(tag, values, bins, max_bins=max_bins),
                                            global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        """Adds a histogram given by its statistics and buckets (right limits and counts)."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        summary = histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                bucket_counts)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Adds a string (markdown) under `tag + '/text_summary'`."""
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def flush(self):
        """Writes every event file's buffered events to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        """Flushes and closes every event file; a later add_* starts new files."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()


def _not_written_yet(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"ember's SummaryWriter does not have {name} yet")
    method.__name__ = name
    method.__doc__ = f"Not in ember yet: raises NotImplementedError (torch's {name})."
    return method


for _name in ("add_hparams", "add_image", "add_images", "add_image_with_boxes", "add_figure",
              "add_video", "add_audio", "add_onnx_graph", "add_graph", "add_embedding",
              "add_pr_curve", "add_pr_curve_raw", "add_custom_scalars_multilinechart",
              "add_custom_scalars_marginchart", "add_custom_scalars", "add_mesh"):
    setattr(SummaryWriter, _name, _not_written_yet(_name))
del _name

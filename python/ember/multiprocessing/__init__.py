"""ember.multiprocessing: Python's multiprocessing (Process, Queue, Pipe, ...) where a tensor
passed to another process - a Process's argument under the spawn start method, anything put on a
Queue - travels as a handle to its memory, not a copy (torch.multiprocessing): CPU tensors move
into shared memory in place (Tensor.share_memory_) and go as a file descriptor, CUDA tensors as a
CUDA IPC handle. With the fork start method (Linux's default), a model after share_memory() is
simply inherited: Hogwild works as in PyTorch's example. spawn() runs a function in n processes and
reports the first failure."""
import multiprocessing as _mp
from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions
from .spawn import (spawn, start_processes, ProcessContext, ProcessRaisedException,  # noqa: F401
                    ProcessExitedException)

__all__ = list(_mp.__all__) + ["spawn", "start_processes", "ProcessContext",
                               "ProcessRaisedException", "ProcessExitedException"]

init_reductions()

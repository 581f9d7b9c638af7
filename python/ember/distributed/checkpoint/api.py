"""torch.distributed.checkpoint.api: the error a failed save or load raises on every rank."""
import traceback


class CheckpointException(BaseException):
    """The failures of a save or load, by rank (PyTorch's class, a BaseException as there)."""

    def __init__(self, msg, failures):
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self):
        return self._failures

    def __str__(self):
        lines = [f"CheckpointException ranks:{list(self._failures.keys())}"]
        for rank, failure in self._failures.items():
            lines.append(f"Rank {rank}:\n{failure}")
        return "\n".join(lines)


def _describe(err):
    """An exception as text another rank can raise (tracebacks do not pickle)."""
    return "".join(traceback.format_exception(type(err), err, err.__traceback__))

"""ember.futures (torch.futures): a Future holds a value or an error that another thread sets;
wait() blocks until it is set, then() chains a callback's result as a new Future."""
import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A result to come (torch.futures.Future): set_result or set_exception once; wait() returns
    the value (raising the error); value() reads it without waiting (it must be done); then(fn)
    is a Future of fn(self); add_done_callback(fn) runs fn(self) when it is done."""

    def __init__(self, *, devices=None):
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []

    def done(self):
        with self._cond:
            return self._done

    def _finish(self, value, error):
        with self._cond:
            if self._done:
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for fn in callbacks:
            fn(self)

    def set_result(self, result):
        self._finish(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got {type(result).__name__}")
        self._finish(None, result)

    def wait(self):
        with self._cond:
            self._cond.wait_for(lambda: self._done)
        return self.value()

    def value(self):
        with self._cond:
            if not self._done:
                raise RuntimeError("Future.value() needs a completed Future")
            if self._error is not None:
                raise self._error
            return self._value

    def add_done_callback(self, callback):
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        result = Future()

        def run(fut):
            try:
                result.set_result(callback(fut))
            except Exception as err:  # noqa: BLE001 (the error is the next future's)
                result.set_exception(err)
        self.add_done_callback(run)
        return result


def collect_all(futures):
    """A Future of the list of futures, done when all of them are."""
    out = Future()
    futures = list(futures)
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(futures)
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures):
    """The values of futures, waiting for each (an error is raised)."""
    return [f.wait() for f in collect_all(futures).wait()]

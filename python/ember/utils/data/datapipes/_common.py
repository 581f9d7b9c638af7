"""Checks the DataPipes share, as torch.utils.data.datapipes.utils.common: that a function given
to a DataPipe can be pickled (a warning for lambdas and local functions), and that it takes as
many arguments as input_col selects."""
import functools
import inspect
import warnings


def validate_input_col(fn, input_col):
    """ValueError when fn cannot take the len(input_col) (or 1) positional arguments it will be
    called with."""
    try:
        sig = inspect.signature(fn)
    except ValueError:  # a built-in without a signature
        return
    input_col_size = len(input_col) if isinstance(input_col, (list, tuple)) else 1
    fn_name = str(fn)
    pos, var_positional, non_default_kw_only = [], False, []
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            pos.append(p)
        elif p.kind is p.VAR_POSITIONAL:
            var_positional = True
        elif p.kind is p.KEYWORD_ONLY and p.default is p.empty:
            non_default_kw_only.append(p)
    if len(non_default_kw_only) > 0:
        raise ValueError(f"The function {fn_name} takes {len(non_default_kw_only)} "
                         f"non-default keyword-only parameters, which is not allowed.")
    if len(sig.parameters) < input_col_size:
        if not var_positional:
            raise ValueError(f"The function {fn_name} takes {len(sig.parameters)} "
                             f"parameters, but {input_col_size} are required.")
    elif len(pos) > input_col_size:
        if any(p.default is p.empty for p in pos[input_col_size:]):
            raise ValueError(f"The function {fn_name} takes {len(pos)} "
                             f"positional parameters, but {input_col_size} are required.")
    elif len(pos) < input_col_size and not var_positional:
        raise ValueError(f"The function {fn_name} takes {len(pos)} "
                         f"positional parameters, but {input_col_size} are required.")


def _is_local_fn(fn):
    if hasattr(fn, "__code__"):
        return fn.__code__.co_flags & inspect.CO_NESTED
    if hasattr(fn, "__qualname__"):
        return "<locals>" in fn.__qualname__
    return "<locals>" in getattr(type(fn), "__qualname__", "")


def _check_unpickable_fn(fn):
    """TypeError when fn is not callable; a UserWarning when pickle cannot save it (a lambda or
    a local function: a DataPipe holding one cannot go to a worker process)."""
    if not callable(fn):
        raise TypeError(f"A callable function is expected, but {type(fn)} is provided.")
    if isinstance(fn, functools.partial):
        fn = fn.func
    if _is_local_fn(fn):
        warnings.warn("Local function is not supported by pickle, please use "
                      "regular python function or functools.partial instead.")
        return
    if getattr(fn, "__name__", None) == "<lambda>":
        warnings.warn("Lambda function is not supported by pickle, please use "
                      "regular python function or functools.partial instead.")

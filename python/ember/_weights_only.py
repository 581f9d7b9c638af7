"""load(weights_only=True): PyTorch's restricted unpickler. A torch.save file is a pickle, and a
pickle may name any global (`os.system`) and call it; under weights_only a global is found only
in an allow-list (tensors, storages, dtypes, devices, sizes, containers, PyTorch's tensor rebuild
functions) or among the globals the user marked safe (add_safe_globals, safe_globals), never by
importing a module. Nothing else a file names is ever looked up, so nothing it names runs.

The globals are found by PyTorch's names (what torch.save writes): torch.X is ember's X.

Note [Files this process wrote]
PyTorch 2.6 made weights_only=True the default, and 1.x programs that save a whole model and load
it back a few lines later (pytorch/examples' word_language_model) stop there. A pickle that this
process itself wrote is as trusted as the program: when weights_only is left to its default,
ember.load reads such a file with the full unpickler. It knows them by the SHA-256 of their
data.pkl, recorded by ember.save, so a file changed on disk since is not among them.
"""
import collections
import hashlib
import os
import pickle

# Never allowed, even when the user marks one of their globals safe (as PyTorch).
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")

_DOCS = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default "
         "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")

# (object, full path) pairs and objects marked safe by the user, in the order given.
_marked = []

_written_digests = set()  # Note [Files this process wrote]


def add_safe_globals(safe_globals):
    """Marks globals (objects, or (object, "module.name") pairs) as safe for weights_only."""
    for g in safe_globals:
        _check_marked(g)
        if g not in _marked:
            _marked.append(g)


def get_safe_globals():
    return list(_marked)


def clear_safe_globals():
    _marked.clear()


class safe_globals:
    """`with safe_globals([...]):` the globals count as safe inside the block only."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)
        for g in self.safe_globals:
            _check_marked(g)

    def __enter__(self):
        self._added = [g for g in self.safe_globals if g not in _marked]
        _marked.extend(self._added)

    def __exit__(self, *exc):
        for g in self._added:
            _marked.remove(g)


def _check_marked(g):
    if isinstance(g, tuple):
        if len(g) != 2:
            raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), "
                             f"but got tuple of length: {len(g)}")
        if type(g[1]) is not str:
            raise TypeError(f"Expected second item in tuple to be str of callable full path, "
                            f"but got: {type(g[1])}")


def _paths_of(obj):
    """The names a file may use for obj: its own, and PyTorch's for an ember object."""
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if module is None or name is None:
        return []
    paths = [f"{module}.{name}"]
    if module == "ember" or module.startswith("ember."):
        paths.append("torch" + module[len("ember"):] + "." + name)
    return paths


def _user_allowed():
    found = {}
    for g in _marked:
        if isinstance(g, tuple):
            found[g[1]] = g[0]
        else:
            for p in _paths_of(g):
                found[p] = g
    return found


def record_written(pickled):
    """Called by save with the data.pkl it wrote (Note [Files this process wrote])."""
    _written_digests.add(hashlib.sha256(pickled).digest())


def written_here(pickled):
    return hashlib.sha256(pickled).digest() in _written_digests


def resolve(weights_only, pickle_module):
    """weights_only as load applies it: PyTorch 2.6's default and environment switches. Returns
    (weights_only, defaulted)."""
    def env(name):
        return os.environ.get(name, "0").lower() in ("1", "y", "yes", "true")
    if env("TORCH_FORCE_WEIGHTS_ONLY_LOAD"):
        return True, False
    if weights_only is None:
        if env("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD") or pickle_module is not None:
            return False, True
        return True, True
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    return bool(weights_only), False


def failure_message(err, defaulted):
    """PyTorch 2.6's message for a refused file."""
    message = str(err)
    unsafe = ("Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
              "but it can result in arbitrary code execution. Do it only if you got the file "
              "from a trusted source.")
    if defaulted:
        unsafe = ("In PyTorch 2.6, we changed the default value of the `weights_only` argument "
                  "in `torch.load` from `False` to `True`. " + unsafe)
    if "was not an allowed global by default" in message:
        text = ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, do those steps only if you trust the source of the checkpoint. "
                f"\n\t(1) {unsafe}\n\t(2) Alternatively, to load with `weights_only=True` please "
                "check the recommended steps in the following error message.\n\t"
                "WeightsUnpickler error: " + message)
    elif "is blocked" in message:
        text = f"Weights only load failed. {unsafe}\n" + message
    else:
        text = (f"Weights only load failed. {unsafe}\nPlease file an issue with the following so "
                "that we can make `weights_only=True` compatible with your use case: "
                "WeightsUnpickler error: " + message)
    return text + _DOCS


def _short(path):
    return path[len("builtins."):] if path.startswith("builtins.") else path


def unsupported_global(module, name):
    path = f"{module}.{name}"
    if module.split(".")[0] in _BLOCKED_MODULES:
        return pickle.UnpicklingError(
            f"Trying to load unsupported GLOBAL {path} whose module {module} is blocked.")
    short = _short(path)
    return pickle.UnpicklingError(
        f"Unsupported global: GLOBAL {short} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{short}])` or the "
        f"`torch.serialization.safe_globals([{short}])` context manager to allowlist this global "
        "if you trust this class/function.")


def allowed_global(module, name, defaults):
    """The object the file may name as module.name, or an UnpicklingError to raise. `defaults`
    maps PyTorch's full names to ember's objects (the serializer's own rebuild functions and
    storages among them)."""
    path = f"{module}.{name}"
    if module.split(".")[0] in _BLOCKED_MODULES:
        raise unsupported_global(module, name)
    if path in defaults:
        return defaults[path]
    user = _user_allowed()
    if path in user:
        return user[path]
    raise unsupported_global(module, name)


def default_globals(ember, rebuilds, storages):
    """PyTorch 2.6's allow-list in ember's objects: {full name: object}."""
    from _codecs import encode
    found = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": ember.nn.Parameter,
        "torch.serialization._get_layout": _get_layout(ember),
        "torch.Size": ember.Size,
        "torch.Tensor": ember.Tensor,
        "torch.device": ember.device,
        "_codecs.encode": encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
    }
    for name in dir(ember):
        value = getattr(ember, name, None)
        if isinstance(value, ember.dtype):
            found["torch." + name] = value
        elif name.endswith("Tensor") and isinstance(value, type) and name != "Tensor":
            found["torch." + name] = value
    for name, value in rebuilds.items():
        found["torch._utils." + name] = value
    for name, value in storages.items():
        found["torch." + name] = value
    found["torch._tensor._rebuild_from_type_v2"] = _rebuild_from_type_v2(ember)
    return found


def _get_layout(ember):
    def get_layout(name):
        layout = getattr(ember, name.rpartition(".")[2], None)
        if layout is None:
            raise RuntimeError(f"ember.load: the file holds tensors of layout {name}, which ember "
                               "does not have")
        return layout
    return get_layout


def _rebuild_from_type_v2(ember):
    """Tensors saved with a Python type or attributes (PyTorch's _rebuild_from_type_v2): only
    ember's own tensor types count; the attributes are set as they were."""
    def rebuild(func, new_type, args, state):
        ret = func(*args)
        if new_type is not type(ret) and new_type not in (ember.Tensor, ember.nn.Parameter):
            raise pickle.UnpicklingError(f"Cannot rebuild a tensor of type {new_type}")
        if state:
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
                for k, v in (slots or {}).items():
                    setattr(ret, k, v)
            if state:
                ret.__dict__.update(state)
        return ret
    return rebuild


# --- the restricted unpickler ---------------------------------------------------------------
#
# Python's own Unpickler, even with find_class restricted, grows its memo to whatever index a
# file names (LONG_BINPUT 1175087203 allocates 9 GB) and builds any object an allowed class's
# __reduce__ protocol can reach; this one interprets the opcodes itself, keeps the memo in a dict,
# and lets only allowed globals be called (REDUCE, NEWOBJ) or given state (BUILD).

import struct as _struct

_OP = {}


def _opcode(*codes):
    def register(fn):
        for c in codes:
            _OP[c] = fn
        return fn
    return register


class Unpickler:
    """Reads a pickle whose globals are found by `find_class` and whose persistent ids (torch's
    storages) by `persistent_load`; everything else a pickle can express is refused."""

    def __init__(self, data, find_class, persistent_load, allowed_types):
        self.data, self.pos = data, 0
        self.find_class, self.persistent_load = find_class, persistent_load
        self.allowed_types = allowed_types  # what BUILD may set state on
        self.stack, self.metastack, self.memo = [], [], {}

    def read(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise pickle.UnpicklingError("pickle data was truncated")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def readline(self):
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise pickle.UnpicklingError("pickle data was truncated")
        out = self.data[self.pos:end]
        self.pos = end + 1
        return out

    def pop_mark(self):
        if not self.metastack:
            raise pickle.UnpicklingError("could not find MARK")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def pop(self):
        if not self.stack:
            raise pickle.UnpicklingError("unpickling stack underflow")
        return self.stack.pop()

    def top(self):
        if not self.stack:
            raise pickle.UnpicklingError("unpickling stack underflow")
        return self.stack[-1]

    def load(self):
        while True:
            code = self.read(1)[0]
            op = _OP.get(code)
            if op is None:
                raise pickle.UnpicklingError(f"Unsupported operand {code}")
            if op(self) is _STOP:
                return self.pop()


_STOP = object()


def _u(fmt, data):
    return _struct.unpack(fmt, data)[0]


@_opcode(pickle.PROTO[0])
def _proto(u):
    u.read(1)


@_opcode(pickle.FRAME[0])
def _frame(u):
    u.read(8)


@_opcode(pickle.STOP[0])
def _stop(u):
    if u.metastack:
        raise pickle.UnpicklingError("MARK left open at STOP")
    return _STOP


@_opcode(pickle.MARK[0])
def _mark(u):
    u.metastack.append(u.stack)
    u.stack = []


def _push(value):
    return lambda u: u.stack.append(value)


_opcode(pickle.NONE[0])(_push(None))
_opcode(pickle.NEWTRUE[0])(_push(True))
_opcode(pickle.NEWFALSE[0])(_push(False))


@_opcode(pickle.EMPTY_TUPLE[0])
def _empty_tuple(u):
    u.stack.append(())


@_opcode(pickle.EMPTY_LIST[0])
def _empty_list(u):
    u.stack.append([])


@_opcode(pickle.EMPTY_DICT[0])
def _empty_dict(u):
    u.stack.append({})


@_opcode(pickle.EMPTY_SET[0])
def _empty_set(u):
    u.stack.append(set())


@_opcode(pickle.BININT[0])
def _binint(u):
    u.stack.append(_u("<i", u.read(4)))


@_opcode(pickle.BININT1[0])
def _binint1(u):
    u.stack.append(u.read(1)[0])


@_opcode(pickle.BININT2[0])
def _binint2(u):
    u.stack.append(_u("<H", u.read(2)))


@_opcode(pickle.LONG1[0])
def _long1(u):
    u.stack.append(pickle.decode_long(u.read(u.read(1)[0])))


@_opcode(pickle.LONG4[0])
def _long4(u):
    n = _u("<i", u.read(4))
    if n < 0 or n > 1 << 16:
        raise pickle.UnpicklingError(f"LONG4 of {n} bytes")
    u.stack.append(pickle.decode_long(u.read(n)))


@_opcode(pickle.BINFLOAT[0])
def _binfloat(u):
    u.stack.append(_u(">d", u.read(8)))


def _text(raw):
    try:
        return str(raw, "utf-8", "surrogatepass")
    except UnicodeDecodeError as err:
        raise pickle.UnpicklingError(f"bad UTF-8 in a string: {err}") from None


@_opcode(pickle.BINUNICODE[0])
def _binunicode(u):
    u.stack.append(_text(u.read(_u("<I", u.read(4)))))


@_opcode(pickle.SHORT_BINUNICODE[0])
def _short_binunicode(u):
    u.stack.append(_text(u.read(u.read(1)[0])))


@_opcode(pickle.BINUNICODE8[0])
def _binunicode8(u):
    u.stack.append(_text(u.read(_u("<Q", u.read(8)))))


@_opcode(pickle.SHORT_BINSTRING[0])
def _short_binstring(u):
    u.stack.append(u.read(u.read(1)[0]).decode("latin1"))


@_opcode(pickle.BINSTRING[0])
def _binstring(u):
    u.stack.append(u.read(_u("<i", u.read(4))).decode("latin1"))


@_opcode(pickle.SHORT_BINBYTES[0])
def _short_binbytes(u):
    u.stack.append(bytes(u.read(u.read(1)[0])))


@_opcode(pickle.BINBYTES[0])
def _binbytes(u):
    u.stack.append(bytes(u.read(_u("<I", u.read(4)))))


@_opcode(pickle.BINBYTES8[0])
def _binbytes8(u):
    u.stack.append(bytes(u.read(_u("<Q", u.read(8)))))


@_opcode(pickle.TUPLE[0])
def _tuple(u):
    items = u.pop_mark()  # before naming u.stack: pop_mark replaces it
    u.stack.append(tuple(items))


def _make_tuple_n(n):
    def op(u):
        if len(u.stack) < n:
            raise pickle.UnpicklingError("unpickling stack underflow")
        items = tuple(u.stack[len(u.stack) - n:])
        del u.stack[len(u.stack) - n:]
        u.stack.append(items)
    return op


_OP[pickle.TUPLE1[0]] = _make_tuple_n(1)
_OP[pickle.TUPLE2[0]] = _make_tuple_n(2)
_OP[pickle.TUPLE3[0]] = _make_tuple_n(3)


@_opcode(pickle.LIST[0])
def _list(u):
    items = u.pop_mark()
    u.stack.append(items)


@_opcode(pickle.DICT[0])
def _dict(u):
    items = u.pop_mark()
    if len(items) % 2:
        raise pickle.UnpicklingError("odd number of items for DICT")
    u.stack.append({items[i]: items[i + 1] for i in range(0, len(items), 2)})


@_opcode(pickle.FROZENSET[0])
def _frozenset(u):
    items = u.pop_mark()
    u.stack.append(frozenset(items))


def _check_list(target):
    if type(target) is not list:
        raise pickle.UnpicklingError(f"Can only append to lists, but got {type(target)}")


@_opcode(pickle.APPEND[0])
def _append(u):
    item = u.pop()
    _check_list(u.top())
    u.top().append(item)


@_opcode(pickle.APPENDS[0])
def _appends(u):
    items = u.pop_mark()
    _check_list(u.top())
    u.top().extend(items)


def _check_dict(target, opcode):
    if type(target) not in (dict, collections.OrderedDict, collections.Counter):
        raise pickle.UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                     f"collections.Counter, but got {type(target)}")


@_opcode(pickle.SETITEM[0])
def _setitem(u):
    value, key = u.pop(), u.pop()
    _check_dict(u.top(), "SETITEM")
    u.top()[key] = value


@_opcode(pickle.SETITEMS[0])
def _setitems(u):
    items = u.pop_mark()
    _check_dict(u.top(), "SETITEMS")
    if len(items) % 2:
        raise pickle.UnpicklingError("odd number of items for SETITEMS")
    for i in range(0, len(items), 2):
        u.top()[items[i]] = items[i + 1]


@_opcode(pickle.ADDITEMS[0])
def _additems(u):
    items = u.pop_mark()
    if type(u.top()) is not set:
        raise pickle.UnpicklingError(f"Can only ADDITEMS to sets, but got {type(u.top())}")
    u.top().update(items)


@_opcode(pickle.BINPUT[0])
def _binput(u):
    u.memo[u.read(1)[0]] = u.top()


@_opcode(pickle.LONG_BINPUT[0])
def _long_binput(u):
    u.memo[_u("<I", u.read(4))] = u.top()


@_opcode(pickle.MEMOIZE[0])
def _memoize(u):
    u.memo[len(u.memo)] = u.top()


def _get(u, key):
    if key not in u.memo:
        raise pickle.UnpicklingError(f"Memo value not found at index {key}")
    u.stack.append(u.memo[key])


_opcode(pickle.BINGET[0])(lambda u: _get(u, u.read(1)[0]))
_opcode(pickle.LONG_BINGET[0])(lambda u: _get(u, _u("<I", u.read(4))))


def _global(u, module, name):
    u.stack.append(u.find_class(module, name))


@_opcode(pickle.GLOBAL[0])
def _global_op(u):
    module = u.readline().decode("utf-8", "replace")
    name = u.readline().decode("utf-8", "replace")
    _global(u, module, name)


@_opcode(pickle.STACK_GLOBAL[0])
def _stack_global(u):
    name, module = u.pop(), u.pop()
    if type(name) is not str or type(module) is not str:
        raise pickle.UnpicklingError("STACK_GLOBAL requires str")
    _global(u, module, name)


@_opcode(pickle.REDUCE[0])
def _reduce(u):
    args = u.pop()
    func = u.top()
    if type(args) is not tuple:
        raise pickle.UnpicklingError(f"REDUCE expects a tuple of arguments, got {type(args)}")
    u.stack[-1] = func(*args)  # func came from find_class: an allowed global


@_opcode(pickle.NEWOBJ[0])
def _newobj(u):
    args = u.pop()
    cls = u.pop()
    if not isinstance(cls, type) or type(args) is not tuple:
        raise pickle.UnpicklingError(f"Can only create new object for allowed classes, but got "
                                     f"{cls}")
    u.stack.append(cls.__new__(cls, *args))


@_opcode(pickle.BUILD[0])
def _build(u):
    state = u.pop()
    inst = u.top()
    if type(inst) not in u.allowed_types():
        raise pickle.UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                                     f"allowlisted via `add_safe_globals`, but got {type(inst)}")
    setstate = getattr(inst, "__setstate__", None)
    if setstate is not None and not isinstance(inst, collections.OrderedDict):
        setstate(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        inst.__dict__.update(state)
    for k, v in (slots or {}).items():
        setattr(inst, k, v)


@_opcode(pickle.BINPERSID[0])
def _binpersid(u):
    pid = u.pop()
    if type(pid) is not tuple:
        raise pickle.UnpicklingError(f"persistent_load id must be tuple, but got {type(pid)}")
    u.stack.append(u.persistent_load(pid))


def allowed_build_types(defaults):
    """The types BUILD may set state on: those of the allow-list and the user's marks."""
    out = {collections.OrderedDict}
    for value in list(defaults.values()) + list(_user_allowed().values()):
        if isinstance(value, type):
            out.add(value)
    return out

"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp and hvp of a Python function of
tensors, over ember's autograd (reverse mode; jvp by the double-backward trick, as PyTorch's).
Inputs and outputs are a tensor or a tuple of tensors; results keep that nesting. Without
create_graph the results are detached; an output independent of an input gives zeros (strict:
an error)."""
import ember

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(x, arg, fn):
    if isinstance(x, tuple):
        items, was_tuple = x, True
    elif isinstance(x, list):
        items, was_tuple = tuple(x), True
    else:
        items, was_tuple = (x,), False
    for i, t in enumerate(items):
        if not isinstance(t, ember.Tensor):
            raise TypeError(f"The {arg} given to {fn} must be either a Tensor or a tuple of "
                            f"Tensors but the value at index {i} has type {type(t)}.")
    return was_tuple, items


def _grad_inputs(inputs, create_graph):
    """Fresh leaves (or graph-keeping views) of inputs that require grad."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(True))
    return tuple(out)


def _grads(outputs, inputs, grad_outputs, create_graph, strict, what):
    """autograd.grad of outputs w.r.t. inputs, zeros where an input does not reach them."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if pairs:
        got = ember.autograd.grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs],
                                  allow_unused=True, create_graph=create_graph,
                                  retain_graph=True)
    else:
        got = [None] * len(inputs)
    result = []
    for i, (g, x) in enumerate(zip(got, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode.")
            g = ember.zeros_like(x)
        result.append(g)
    return tuple(result)


def _finish(x, create_graph):
    return x if create_graph else x.detach()


def _unpack(was_tuple, items):
    return items if was_tuple else items[0]


def _check_v(v, like, fn, arg="v"):
    if len(v) != len(like):
        raise RuntimeError(f"{arg} is a tuple of invalid length: should be {len(like)} but got "
                           f"{len(v)}.")
    for i, (a, b) in enumerate(zip(v, like)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f"Entry {i} in {arg} has invalid size: should be "
                               f"{list(b.shape)} but got {list(a.shape)}.")


def _input_shaped_v(v, inputs, fn):
    """v as a tuple shaped as inputs (None: ones, for a single one-element input)."""
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        return (ember.ones_like(inputs[0]),)
    _, v = _as_tuple(v, "v", fn)
    _check_v(v, inputs, fn)
    return v


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs (v may be omitted for a
    single-element output)."""
    with ember.enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_inputs(inputs, create_graph)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                       "vjp")
        if v is None:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function "
                                   "returns a single Tensor with a single element.")
            v = (ember.ones_like(outputs[0]),)
        else:
            _, v = _as_tuple(v, "v", "vjp")
            _check_v(v, outputs, "vjp")
        grads = _grads(outputs, inputs, v, create_graph, strict, "vjp")
    return (_unpack(out_tuple, tuple(_finish(o, create_graph) for o in outputs)),
            _unpack(in_tuple, tuple(_finish(g, create_graph) for g in grads)))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, as the gradient with respect to u of
    u^T J v (the double-backward trick)."""
    with ember.enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_inputs(inputs, create_graph)
        v = _input_shaped_v(v, inputs, "jvp")
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                       "jvp")
        dummies = tuple(ember.zeros_like(o).requires_grad_(True) for o in outputs)
        vjps = _grads(outputs, inputs, dummies, True, strict, "jvp")
        result = _grads(vjps, dummies, v, create_graph, strict, "jvp")
    return (_unpack(out_tuple, tuple(_finish(o, create_graph) for o in outputs)),
            _unpack(out_tuple, tuple(_finish(r, create_graph) for r in result)))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of func at inputs: for each output and input, a tensor of shape
    output.shape + input.shape (row by row in reverse mode; `strategy` and `vectorize` choose
    only how PyTorch computes the same numbers)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    with ember.enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_inputs(inputs, create_graph)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                       "jacobian")
        per_output = []
        for out in outputs:
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(flat.numel()):
                grads = _grads((flat[j],), inputs, (ember.ones_like(flat[j]),), create_graph,
                               strict, "jacobian")
                for i, g in enumerate(grads):
                    rows[i].append(g)
            jac = []
            for i, x in enumerate(inputs):
                shape = tuple(out.shape) + tuple(x.shape)
                if rows[i]:
                    jac.append(_finish(ember.stack(rows[i]).reshape(shape), create_graph))
                else:
                    jac.append(ember.zeros(shape, dtype=x.dtype, device=x.device))
            per_output.append(_unpack(in_tuple, tuple(jac)))
    return _unpack(out_tuple, tuple(per_output))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function with a single-element output: the Jacobian of its gradient
    (for each pair of inputs, input_i.shape + input_j.shape)."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        out = func(*xs)
        if not isinstance(out, ember.Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "with a single element.")
        return _grads((out.reshape(()),), xs, (ember.ones((), dtype=out.dtype),), True, strict,
                      "hessian")

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict)
    return result if in_tuple else result[0][0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H): the vector-Hessian product of a single-element function."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): the Hessian-vector product (H is symmetric, so v^T H's transpose)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph, strict, name):
    with ember.enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", name)
        inputs = _grad_inputs(inputs, create_graph)
        v = _input_shaped_v(v, inputs, name)
        out = func(*inputs)
        if not isinstance(out, ember.Tensor) or out.numel() != 1:
            raise RuntimeError(f"The function given to {name} should return a single Tensor "
                               f"with a single element.")
        grads = _grads((out,), inputs, (ember.ones_like(out),), True, strict, name)
        result = _grads(grads, inputs, v, create_graph, strict, name)
    return (_finish(out, create_graph),
            _unpack(in_tuple, tuple(_finish(r, create_graph) for r in result)))

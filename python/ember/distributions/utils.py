"""torch.distributions.utils: the helpers the families share (broadcasting of parameters,
probs/logits conversions, lazily derived parameters, packing of lower triangles), and the
samplers PyTorch has as ATen ops but ember has not: torch._standard_gamma (with its
reparameterized gradient), torch._sample_dirichlet and torch._dirichlet_grad, torch.poisson
and torch.binomial. Those are written over ember's public ops with ATen's algorithms
(aten/src/ATen/native/Distributions.h of PyTorch 1.13), each rejection loop run on whole tensors:
every element keeps its first accepted proposal."""
import math
from functools import update_wrapper
from numbers import Number

import ember

euler_constant = 0.57721566490153286060  # Euler Mascheroni Constant


def broadcast_all(*values):
    """Broadcasts tensors and numbers together; numbers become tensors of the first tensor's
    dtype and device (of the default dtype when all are numbers)."""
    if not all(isinstance(v, (ember.Tensor, Number)) for v in values):
        raise ValueError('Input arguments must all be instances of numbers.Number, '
                         'torch.Tensor or objects implementing __torch_function__.')
    if not all(isinstance(v, ember.Tensor) for v in values):
        options = dict(dtype=ember.get_default_dtype())
        for value in values:
            if isinstance(value, ember.Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = [v if isinstance(v, ember.Tensor) else ember.tensor(v, **options)
                  for v in values]
    return ember.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return ember.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sums out the `dim` rightmost dimensions of value."""
    if dim == 0:
        return value
    required_shape = tuple(value.shape[:-dim]) + (-1,)
    return value.reshape(required_shape).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Binary logits are log odds (sigmoid); otherwise the last dim holds unnormalized log
    probabilities (softmax)."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.nn.functional.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Keeps probabilities in [eps, 1 - eps] so that their logs and log-odds stay finite."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ember.log(ps_clamped) - ember.log1p(-ps_clamped)
    return ember.log(ps_clamped)


class lazy_property:
    """A non-data descriptor that computes an attribute on first use and then stores it on the
    instance: probs from logits (or the reverse) are only made when asked for. It computes with
    grad enabled, so that a value first asked for under no_grad still differentiates later."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """Looked up on the class, a lazy property is both a property (for documentation tools) and
    a lazy_property (so that argument validation skips parameters not yet computed)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n, diag, device):
    arange = ember.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (from diagonal `diag`) of a (batch of) D x D matrix, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f'diag ({diag}) provided is outside [{-n}, {n-1}].')
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: a (batch of) lower-triangular D x D matrix."""
    # +ve root of D**2 + (1+2*diag)*D - |diag| * (diag+1) - 2*vec.shape[-1] = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag)**2 + 8 * vec.shape[-1]
                            + 4 * abs(diag) * (diag + 1))**0.5) / 2
    eps = ember.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f'The size of last dimension is {vec.shape[-1]} which cannot be '
                         'expressed as the lower triangular part of a square D x D matrix.')
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class _ProbsLogits:
    """The probs-or-logits parameterization of Bernoulli, Binomial, Categorical, Geometric,
    NegativeBinomial and the relaxed families: exactly one is given and kept; the other is
    derived on first use. _is_binary says whether logits are log odds (sigmoid) or log
    probabilities over the last dim (softmax)."""
    _is_binary = True

    def _set_param(self, probs, logits, *others):
        """Stores the given one of probs/logits broadcast with `others` (which come first, as
        PyTorch orders them); returns the broadcast others."""
        _one_of(probs, logits)
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        *others, param = broadcast_all(*others, value)
        setattr(self, name, param)
        return others

    @property
    def _param(self):
        """The parameter the others derive from (probs when both exist: same shape, dtype and
        device either way)."""
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    def _expanded_params(self, shape):
        """For expand(): probs and/or logits (those made so far), expanded to shape."""
        return {name: self.__dict__[name].expand(shape) for name in ("probs", "logits")
                if name in self.__dict__}

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._is_binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._is_binary)

    @property
    def param_shape(self):
        return self._param.size()

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)


def _expand_support(values, batch_shape, expand):
    """enumerate_support's layout of the support `values` (cardinality first, then the event
    dims): singleton batch dims, or expanded over batch_shape."""
    event_shape = tuple(values.shape[1:])
    values = values.view((values.shape[0],) + (1,) * len(batch_shape) + event_shape)
    if expand:
        values = values.expand((-1,) + tuple(batch_shape) + event_shape)
    return values


# ----------------------------------------------------------------------------------------------
# Samplers: ATen's algorithms, computed in float64 as PyTorch's CPU kernels do.

def _rand(like):
    return ember.rand(like.shape, dtype=like.dtype, device=like.device)


def _rejection(done, propose):
    """Runs a rejection sampler on every element at once: propose() returns (values, accepted)
    for all elements, and each element keeps the value of its first accepted round. Elements
    that are True in the mask `done` take no part (they stay zero)."""
    result = ember.zeros(done.shape, dtype=ember.float64, device=done.device)
    while not bool(done.all()):
        value, accept = propose()
        accept = accept & ~done
        result = ember.where(accept, value, result)
        done = done | accept
    return result


def _sample_gamma_float64(alpha):
    """ATen's sample_gamma in float64: Marsaglia and Tsang's method (doi:10.1145/358407.358414),
    alpha < 1 boosted to alpha + 1 and the draw scaled by U^(1/alpha) (zero at alpha == 0)."""
    alpha = alpha.detach().double()
    # ATen would loop forever on a nan or negative alpha; those draws are nan here.
    valid = alpha >= 0
    alpha = ember.where(valid, alpha, 1.0)
    boost = alpha < 1
    scale = ember.where(boost, (1 - _rand(alpha)).pow(1 / alpha), 1.0)
    alpha = ember.where(boost, alpha + 1, alpha)
    d = alpha - 1 / 3
    c = 1 / ember.sqrt(9 * d)

    def propose():
        # A proposal with y <= 0 is redrawn, as ATen's inner loop redraws x alone.
        x = _standard_normal(alpha.shape, ember.float64, alpha.device)
        y = 1 + c * x
        v = y * y * y
        u = 1 - _rand(alpha)
        xx = x * x
        accept = (y > 0) & ((u < 1 - 0.0331 * xx * xx) |
                            (ember.log(u) < 0.5 * xx + d * (1 - v + ember.log(v))))
        return d * v, accept

    sample = scale * _rejection(~valid, propose)
    return ember.where(valid, sample, math.nan)


def _sample_standard_gamma(alpha):
    """torch._standard_gamma's draw: Gamma(alpha, 1), at least the dtype's smallest normal."""
    with ember.no_grad():
        sample = _sample_gamma_float64(alpha).to(alpha.dtype)
        return sample.clamp(min=ember.finfo(alpha.dtype).tiny)


_GAMMA_GRAD_COEF_UV = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07),
)


def _standard_gamma_grad(alpha, x):
    """torch._standard_gamma_grad: the reparameterized gradient dx/dalpha =
    -(d/dalpha cdf(x; alpha)) / pdf(x; alpha) of a Gamma(alpha, 1) draw x, with ATen's three
    approximations: a Taylor series for x < 0.8, Rice's saddle point expansion for alpha > 8,
    and a bivariate rational approximation otherwise."""
    with ember.no_grad():
        a, x = alpha.double(), x.double()
        # Taylor series expansion for small x.
        numer, denom = ember.ones_like(x), a
        series1, series2 = numer / denom, numer / (denom * denom)
        for i in range(1, 6):
            numer = numer * (-x / i)
            denom = denom + 1
            series1 = series1 + numer / denom
            series2 = series2 + numer / (denom * denom)
        pow_x_alpha = x.pow(a)
        gamma_pdf = x.pow(a - 1) * ember.exp(-x)
        gamma_cdf = pow_x_alpha * series1
        gamma_cdf_alpha = (ember.log(x) - ember.digamma(a)) * gamma_cdf - pow_x_alpha * series2
        small_x = -gamma_cdf_alpha / gamma_pdf
        small_x = ember.where(ember.isnan(small_x), 0.0, small_x)
        # Rice saddle point expansion for large alpha (its own expansion near x == alpha).
        numer_1 = 1 + 24 * a * (1 + 12 * a)
        numer_2 = (1440 * (a * a) + 6 * x * (53 - 120 * x) - 65 * x * x / a
                   + a * (107 + 3600 * x))
        near_mean = numer_1 * numer_2 / (1244160 * (a * a) * (a * a))
        denom = ember.sqrt(8 * a)
        term2 = denom / (a - x)
        term3 = (x - a - a * ember.log(x / a)).pow(-1.5)
        term23 = ember.where(x < a, term2 - term3, term2 + term3)
        term1 = ember.log(x / a) * term23 - ember.sqrt(2 / a) * (a + x) / ((a - x) * (a - x))
        stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
        saddle = -stirling * (x * term1) / denom
        large_alpha = ember.where((0.9 * a <= x) & (x <= 1.1 * a), near_mean, saddle)
        # Bivariate rational approximation.
        u, v = ember.log(x / a), ember.log(a)
        coef_v = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_GAMMA_GRAD_COEF_UV)]
        p = coef_v[0] + v * (coef_v[1] + v * (coef_v[2] + v * coef_v[3]))
        q = coef_v[4] + v * (coef_v[5] + v * (coef_v[6] + v * coef_v[7]))
        rational = ember.exp(p / q)
        result = ember.where(x < 0.8, small_x, ember.where(a > 8, large_alpha, rational))
        return result.to(alpha.dtype)


class _StandardGamma(ember.autograd.Function):
    """torch._standard_gamma: a Gamma(alpha, 1) draw, differentiable in alpha through the
    implicit reparameterization (torch's derivative formula: grad * _standard_gamma_grad)."""

    @staticmethod
    def forward(ctx, alpha):
        x = _sample_standard_gamma(alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * _standard_gamma_grad(alpha, x)


def _standard_gamma(concentration):
    return _StandardGamma.apply(concentration)


def _sample_dirichlet(concentration):
    """torch._sample_dirichlet: float64 gamma draws (at least float64's smallest normal),
    normalized, then kept within [tiny, nextafter(1, 0)] of the dtype."""
    with ember.no_grad():
        gamma = _sample_gamma_float64(concentration).clamp(min=ember.finfo(ember.float64).tiny)
        x = (gamma / gamma.sum(-1, keepdim=True)).to(concentration.dtype)
        finfo = ember.finfo(concentration.dtype)
        return x.clamp(min=finfo.tiny, max=1 - finfo.eps / 2)


def _beta_grad_alpha_small(x, alpha, beta):
    """d/dalpha of a Beta(alpha, beta) draw x close to 0: a Taylor expansion."""
    factor = ember.digamma(alpha) - ember.digamma(alpha + beta) - ember.log(x)
    numer = ember.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x).pow(-beta) * series
    return ember.where(ember.isnan(result), 0.0, result)


def _beta_grad_beta_small(x, alpha, beta):
    """d/dbeta of a Beta(alpha, beta) draw x close to 0: a Taylor expansion."""
    factor = ember.digamma(alpha + beta) - ember.digamma(beta)
    numer, betas, dbetas = ember.ones_like(x), ember.ones_like(x), ember.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x).pow(1 - beta) * series
    return ember.where(ember.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(x, alpha, beta):
    """d/dalpha of a Beta(alpha, beta) draw for large alpha and beta: Rice's saddle point
    expansion (with its own expansion near the mean, where the first is singular)."""
    total = alpha + beta
    mean = alpha / total
    std = ember.sqrt(alpha * beta / (total + 1)) / total
    poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    near_mean = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / ember.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = ember.sqrt(2 * alpha / beta) * total.pow(1.5) * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * ember.log(alpha / (total * x))
    term3 = ember.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * ember.log(beta / (total * (1 - x)))
             + alpha * ember.log(alpha / (total * x))).pow(-1.5)
    term1234 = term1 + term2 * (term3 + ember.where(x < mean, term4, -term4))
    saddle = stirling * prefactor * term1234
    return ember.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near_mean, saddle)


# ATen's rational correction to the analytic approximation of the Beta gradient: c[0] are the
# numerator's coefficients, c[1] the denominator's, indexed [power of u][power of a][power of b].
_DIRICHLET_GRAD_COEF = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))),
)


def _dirichlet_grad(x, alpha, total):
    """torch._dirichlet_grad: the scaled reparameterized gradient
    -(d/dalpha cdf(x; alpha, beta)) / pdf(x; alpha, beta) / (1 - x) of a Beta(alpha,
    beta = total - alpha) marginal x of a Dirichlet draw, by ATen's regimes."""
    with ember.no_grad():
        dtype = x.dtype
        x, alpha, total = x.double(), alpha.double(), total.double()
        beta = total - alpha
        boundary = total * x * (1 - x)
        u = ember.log(x)
        a = ember.log(alpha) - u
        b = ember.log(total) - a
        pow_u, pow_a = (1, u, u * u), (1, a, a * a)
        p = q = 0.0
        for i in range(3):
            for j in range(3):
                ua = pow_u[i] * pow_a[j]
                cp, cq = _DIRICHLET_GRAD_COEF[0][i][j], _DIRICHLET_GRAD_COEF[1][i][j]
                p = p + ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
                q = q + ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
        approx = x * (ember.digamma(total) - ember.digamma(alpha)) / beta
        result = p / q * approx
        result = ember.where((alpha > 6) & (beta > 6), _beta_grad_alpha_mid(x, alpha, beta),
                             result)
        result = ember.where((x >= 0.5) & (boundary < 0.75),
                             -_beta_grad_beta_small(1 - x, beta, alpha), result)
        result = ember.where((x <= 0.5) & (boundary < 2.5),
                             _beta_grad_alpha_small(x, alpha, beta), result)
        return result.to(dtype)


def _poisson(rate):
    """torch.poisson (ATen's sample_poisson, numpy's algorithm): Knuth's product of uniforms
    below rate 10, Hörmann's transformed rejection (PTRS, 1993) from 10 on."""
    with ember.no_grad():
        lam = rate.detach().double()
        large = lam >= 10
        lam_large = ember.where(large, lam, 10.0)
        slam, loglam = ember.sqrt(lam_large), ember.log(lam_large)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)

        def propose():
            U = _rand(lam) - 0.5
            V = _rand(lam)
            us = 0.5 - U.abs()
            k = ember.floor((2 * a / us + b) * U + lam_large + 0.43)
            quick = (us >= 0.07) & (V <= vr)
            possible = (k >= 0) & ~((us < 0.013) & (V > us))
            ratio = (ember.log(V) + ember.log(invalpha) - ember.log(a / (us * us) + b)
                     <= -lam_large + k * loglam - ember.lgamma(k + 1))
            return k, quick | (possible & ratio)

        ptrs = _rejection(~large, propose)
        # Knuth: the count of uniforms whose running product stays above exp(-rate).
        enlam = ember.exp(-lam)
        prod = ember.ones_like(lam)
        count = ember.zeros_like(lam)
        done = ~((lam > 0) & (lam < 10))
        while not bool(done.all()):
            prod = prod * _rand(lam)
            more = prod > enlam
            count = count + (more & ~done)
            done = done | ~more
        return ember.where(large, ptrs, count).to(rate.dtype)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_approx_tail(k):
    """log(k!) minus its Stirling approximation: tabulated up to 9, a series beyond."""
    table = ember.tensor(_STIRLING_TAIL, dtype=k.dtype, device=k.device)
    kp1sq = (k + 1) * (k + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return ember.where(k <= 9, ember.take(table, k.clamp(0, 9).long()), series)


def _binomial(count, prob):
    """torch.binomial (ATen's sample_binomial, TensorFlow's algorithms): by symmetry on
    prob <= 0.5, inversion of geometric waiting times when count * prob < 10, Hörmann's BTRS
    transformed rejection otherwise."""
    with ember.no_grad():
        dtype = prob.dtype
        count, prob = ember.broadcast_tensors(count.detach().double(), prob.detach().double())
        flip = prob > 0.5
        q = ember.where(flip, 1 - prob, prob)
        active = (count > 0) & (q > 0)  # also False where prob is nan
        use_btrs = active & (count * q >= 10)
        use_inversion = active & ~use_btrs
        # Inversion: the number of geometric waiting times that fit in count trials.
        logprob = ember.log1p(-ember.where(use_inversion, q, 0.5))
        geom_sum = ember.zeros_like(q)
        inversion = ember.zeros_like(q)
        done = ~use_inversion
        while not bool(done.all()):
            geom_sum = geom_sum + ember.ceil(ember.log(_rand(q)) / logprob)
            stop = geom_sum > count
            inversion = inversion + (~stop & ~done)
            done = done | stop
        # BTRS, on safe stand-in parameters where it is not used.
        n = ember.where(use_btrs, count, 20.0)
        p = ember.where(use_btrs, q, 0.5)
        stddev = ember.sqrt(n * p * (1 - p))
        b = 1.15 + 2.53 * stddev
        a = -0.0873 + 0.0248 * b + 0.01 * p
        c = n * p + 0.5
        v_r = 0.92 - 4.2 / b
        r = p / (1 - p)
        alpha = (2.83 + 5.1 / b) * stddev
        m = ember.floor((n + 1) * p)

        def propose():
            U = _rand(q) - 0.5
            V = _rand(q)
            us = 0.5 - U.abs()
            k = ember.floor((2 * a / us + b) * U + c)
            valid = (k >= 0) & (k <= n)
            quick = (us >= 0.07) & (V <= v_r)
            # As ATen (and TensorFlow), which deviate from Hörmann by a missing log.
            V = ember.log(V * alpha / (a / (us * us) + b))
            kc = k.clamp(0, None)
            upperbound = ((m + 0.5) * ember.log((m + 1) / (r * (n - m + 1)))
                          + (n + 1) * ember.log((n - m + 1) / (n - kc + 1))
                          + (kc + 0.5) * ember.log(r * (n - kc + 1) / (kc + 1))
                          + _stirling_approx_tail(m) + _stirling_approx_tail(n - m)
                          - _stirling_approx_tail(kc) - _stirling_approx_tail(n - kc))
            return k, valid & (quick | (V <= upperbound))

        btrs = _rejection(~use_btrs, propose)
        k = ember.where(use_btrs, btrs, inversion)
        # ATen's order of cases: no trials or prob <= 0, then prob >= 1, then a nan prob.
        k = ember.where(flip, count - k, k)
        k = ember.where(ember.isnan(prob), math.nan, k)
        k = ember.where(prob >= 1, count, k)
        k = ember.where((count <= 0) | (prob <= 0), 0.0, k)
        return k.to(dtype)

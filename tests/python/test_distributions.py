"""ember.distributions (Categorical, Bernoulli, Normal) against torch.distributions 1.13: log_prob,
entropy, gradients, sample shapes and frequencies; and torch.serialization's safe_globals."""
import numpy as np
import pytest
import torch

import ember

P = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], dtype=np.float32)


def close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_categorical_matches_torch():
    tc = torch.distributions.Categorical(torch.tensor(P))
    ec = ember.distributions.Categorical(ember.tensor(P))
    close(ec.log_prob(ember.tensor([2, 0])), tc.log_prob(torch.tensor([2, 0])))
    close(ec.entropy(), tc.entropy())
    assert tuple(ec.batch_shape) == tuple(tc.batch_shape) == (2,)
    lg = ember.tensor(np.log(P), requires_grad=True)
    tl = torch.tensor(np.log(P), requires_grad=True)
    ember.distributions.Categorical(logits=lg).log_prob(ember.tensor([1, 1])).sum().backward()
    torch.distributions.Categorical(logits=tl).log_prob(torch.tensor([1, 1])).sum().backward()
    close(lg.grad, tl.grad)
    ember.manual_seed(0)
    s = ec.sample((4000,))
    assert tuple(s.shape) == (4000, 2) and s.dtype == ember.int64
    np.testing.assert_allclose(np.bincount(s.numpy()[:, 0], minlength=3) / 4000, P[0], atol=0.03)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        ember.distributions.Categorical()


def test_normal_and_bernoulli_match_torch():
    en = ember.distributions.Normal(ember.tensor([0.0, 1.0]), ember.tensor([1.0, 2.0]))
    tn = torch.distributions.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
    close(en.log_prob(ember.tensor([0.5, 0.5])), tn.log_prob(torch.tensor([0.5, 0.5])))
    close(en.entropy(), tn.entropy())
    close(en.cdf(ember.tensor([0.5, 0.5])), tn.cdf(torch.tensor([0.5, 0.5])))
    loc = ember.zeros(2, requires_grad=True)
    ember.distributions.Normal(loc, 1.0).rsample((3,)).sum().backward()
    assert loc.grad.tolist() == [3.0, 3.0]
    eb = ember.distributions.Bernoulli(ember.tensor([0.3, 0.9]))
    tb = torch.distributions.Bernoulli(torch.tensor([0.3, 0.9]))
    close(eb.log_prob(ember.tensor([1.0, 0.0])), tb.log_prob(torch.tensor([1.0, 0.0])))
    close(eb.entropy(), tb.entropy())
    assert tuple(eb.sample((5,)).shape) == (5, 2)


def test_safe_globals_and_default_backend():
    with ember.serialization.safe_globals([np.ndarray]):
        assert np.ndarray in ember.serialization.get_safe_globals()
    assert np.ndarray not in ember.serialization.get_safe_globals()
    assert ember.distributed.get_default_backend_for_device("cuda:1") == "nccl"
    assert ember.distributed.get_default_backend_for_device(ember.device("cpu")) == "gloo"

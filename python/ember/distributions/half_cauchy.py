"""torch.distributions.HalfCauchy: |X| for X ~ Cauchy(0, scale); infinite mean."""
import math

import ember

from .cauchy import Cauchy
from .half_normal import _Folded

__all__ = ['HalfCauchy']


class HalfCauchy(_Folded):
    """The half-Cauchy distribution with scale `scale`."""

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return ember.full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                          device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance

"""ember.nn.init: parameter initialisation in place, without recording gradients."""
from .. import _C

_i = _C._nn._init
uniform_, normal_, constant_, zeros_, ones_ = _i.uniform_, _i.normal_, _i.constant_, _i.zeros_, _i.ones_
xavier_uniform_, xavier_normal_ = _i.xavier_uniform_, _i.xavier_normal_
kaiming_uniform_, kaiming_normal_ = _i.kaiming_uniform_, _i.kaiming_normal_

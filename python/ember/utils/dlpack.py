"""ember.utils.dlpack: tensors to and from DLPack capsules, shared without a copy."""
from .. import _C

to_dlpack = _C._to_dlpack
from_dlpack = _C.from_dlpack

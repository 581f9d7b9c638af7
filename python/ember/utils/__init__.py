"""ember.utils: data loading (ember.utils.data) and DLPack (ember.utils.dlpack)."""
from . import data, dlpack  # noqa: F401

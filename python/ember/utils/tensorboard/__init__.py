"""ember.utils.tensorboard: torch.utils.tensorboard's SummaryWriter, writing TensorBoard event
files (scalars, histograms, text) with neither TensorBoard nor protobuf installed."""
from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]

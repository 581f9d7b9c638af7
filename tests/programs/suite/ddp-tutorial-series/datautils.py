# From pytorch/examples, distributed/ddp-tutorial-series/datautils.py at a308b4e97459b07c1b356642b2a8b4206c6d6de1 (BSD-3-Clause),
# kept as written for ember's test suite (python -m ember.run); no edits.
import torch
from torch.utils.data import Dataset

class MyTrainDataset(Dataset):
    def __init__(self, size):
        self.size = size
        self.data = [(torch.rand(20), torch.rand(1)) for _ in range(size)]

    def __len__(self):
        return self.size
    
    def __getitem__(self, index):
        return self.data[index]
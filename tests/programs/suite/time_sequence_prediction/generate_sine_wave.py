# From pytorch/examples, time_sequence_prediction/generate_sine_wave.py at 2c57b0011a096aef83da3b5265a14db2f80cb124 (BSD-3-Clause),
# kept as written for ember's test suite (python -m ember.run); no edits.
import numpy as np
import torch

np.random.seed(2)

T = 20
L = 1000
N = 100

x = np.empty((N, L), 'int64')
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype('float64')
torch.save(data, open('traindata.pt', 'wb'))

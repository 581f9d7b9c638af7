# Found first on PYTHONPATH in the processes a program under `python -m ember.run` starts: makes
# this `import torch` (and every later one) give ember. See ember/run.py.
import ember.run

ember.run.patch_torch()

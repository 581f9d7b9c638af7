"""torch.fft: discrete Fourier transforms (fft, rfft, hfft and their inverses over one dim, two
or n), sample frequencies and shifts, declared in C++ (ember._C._fft; pocketfft on the CPU)."""
from ._C._fft import *  # noqa: F401,F403

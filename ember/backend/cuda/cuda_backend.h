// The CUDA backend as core sees it. Defined in backend/cuda/ when ember is built with CUDA, and in
// backend/no_cuda/ otherwise (0 devices, and the reason says ember was built without CUDA).
#pragma once

#include <string>
#include <vector>

#include "ember/core/device_backend.h"

namespace ember::cuda {

DeviceBackend& backend();

/// Whether this build of ember includes the CUDA backend.
bool is_built();

}  // namespace ember::cuda

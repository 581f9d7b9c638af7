// Internal to the CUDA backend: the devices' activity for the profiler, through CUPTI
// (activity.cpp). CudaBackend::start_activity / stop_activity are these.
#pragma once

#include <vector>

#include "ember/core/profiler_events.h"

namespace ember::cuda {

/// Starts recording every GPU's kernels, copies and memsets, each linked to the profiled range
/// that launched it; throws (naming CUPTI's reason) when the GPUs cannot be profiled.
void start_activity();
/// Waits for the GPUs, stops recording and hands over what ran, as device events
/// (profiler::Event::on_device) on the steady clock of the host's events.
std::vector<profiler::Event> stop_activity();

}  // namespace ember::cuda

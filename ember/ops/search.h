// Counting and searching: unique values (with inverse indices and counts), bincount, histc,
// searchsorted / bucketize, count_nonzero. Composed of sorts, scans and reductions.
#pragma once

#include <optional>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

/// The sorted distinct elements of x (flattened), the index of each element's value among them
/// (x's shape), and how often each occurs.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x);
/// unique_consecutive: runs of equal consecutive elements collapsed (flattened).
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& x);
/// How often each value 0..max(x) (at least minlength) occurs in the 1-D non-negative integer x,
/// or the sum of `weights` at those positions.
Tensor bincount(const Tensor& x, const Tensor& weights = Tensor(), int64_t minlength = 0);
/// A histogram of x with `bins` equal bins over [min, max] (x's own range when both are 0).
Tensor histc(const Tensor& x, int64_t bins = 100, double min = 0, double max = 0);
/// Where each value would be inserted into the sorted last dim of `sorted` to keep it sorted
/// (the leftmost place, or the rightmost with `right`).
Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right = false,
                    bool out_int32 = false);
/// Each index i of the 1-D `repeats` repeated repeats[i] times, in order ([2, 0, 1] -> [0, 0, 2]).
Tensor repeat_interleave(const Tensor& repeats);
/// The number of non-zero elements over dims (all when empty).
Tensor count_nonzero(const Tensor& x, const Dims& dims = {});

}  // namespace ember

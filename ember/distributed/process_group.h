// A group of ranks that run collectives together (PyTorch's ProcessGroup). Every operation is
// asynchronous: it is queued in call order, and the returned Work says when it is done. Every
// rank must call the same collectives in the same order.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/tensor.h"
#include "ember/distributed/work.h"

namespace ember::distributed {

enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX };
const char* reduce_op_name(ReduceOp op);

inline constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::minutes(5);

class ProcessGroup {
 public:
  ProcessGroup(int rank, int size) : rank_(rank), size_(size) {}
  virtual ~ProcessGroup() = default;
  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual std::string backend() const = 0;
  /// How long a blocking collective may take before it is an error.
  virtual std::chrono::milliseconds timeout() const { return kDefaultTimeout; }
  /// How much longer than timeout() a blocking call waits: long enough for a backend with its own
  /// timeouts (Gloo, NCCL's watchdog) to report first, with its details; none for one that has
  /// none (MPI), whose only timeout is that wait.
  virtual std::chrono::milliseconds wait_slack() const { return std::chrono::seconds(5); }

  /// In place: every rank's `tensor` becomes the reduction of all ranks' tensors.
  virtual std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op = ReduceOp::SUM) = 0;
  /// Rank `src`'s tensor into every rank's `tensor`.
  virtual std::shared_ptr<Work> broadcast(Tensor tensor, int src) = 0;
  /// The reduction lands in rank `dst`'s tensor; other ranks' tensors are left unspecified.
  virtual std::shared_ptr<Work> reduce(Tensor tensor, int dst, ReduceOp op = ReduceOp::SUM) = 0;
  /// outputs[r] (one per rank, each like input) receives rank r's input.
  virtual std::shared_ptr<Work> all_gather(std::vector<Tensor> outputs, Tensor input) = 0;
  /// Like all_gather, into rank `dst`'s outputs only (others pass an empty list).
  virtual std::shared_ptr<Work> gather(std::vector<Tensor> outputs, Tensor input, int dst) = 0;
  /// Rank `src`'s inputs[r] into rank r's output (other ranks pass an empty list).
  virtual std::shared_ptr<Work> scatter(Tensor output, std::vector<Tensor> inputs, int src) = 0;
  /// output = reduction over ranks of inputs[this rank].
  virtual std::shared_ptr<Work> reduce_scatter(Tensor output, std::vector<Tensor> inputs,
                                               ReduceOp op = ReduceOp::SUM) = 0;
  /// The flat forms FSDP shards over (PyTorch's all_gather_into_tensor and reduce_scatter_tensor):
  /// `whole` holds size() times `part`'s elements (shaped [size() * d0, ...] or [size(), ...]),
  /// rank r's part at chunk r. all_gather_into_tensor fills every rank's `output` with every
  /// rank's `input`; reduce_scatter_tensor gives `output` the reduction over ranks of chunk
  /// rank() of their `input`.
  virtual std::shared_ptr<Work> all_gather_into_tensor(Tensor output, Tensor input) = 0;
  virtual std::shared_ptr<Work> reduce_scatter_tensor(Tensor output, Tensor input,
                                                      ReduceOp op = ReduceOp::SUM) = 0;
  /// Splits input into size() equal chunks along dim 0; chunk r goes to rank r, and output's
  /// chunk r comes from rank r (PyTorch's all_to_all_single with equal splits).
  virtual std::shared_ptr<Work> all_to_all(Tensor output, Tensor input) = 0;
  virtual std::shared_ptr<Work> barrier() = 0;
  virtual std::shared_ptr<Work> send(Tensor tensor, int dst, int tag = 0) = 0;
  virtual std::shared_ptr<Work> recv(Tensor tensor, int src, int tag = 0) = 0;

 protected:
  // Checks every backend makes; each error names the operation `op`.
  void check_rank(int r, const char* op) const;
  /// ReduceOp::AVG divides by the world size, so it needs a floating point dtype.
  static void check_reduce_op(ReduceOp reduce, DType dtype, const char* op);
  /// `t` has like's shape and dtype; `what` names it ("output", "input").
  static void check_like(const Tensor& t, const Tensor& like, const char* op, const char* what);
  /// One tensor per rank, each like `like`.
  void check_list(const std::vector<Tensor>& list, const Tensor& like, const char* op,
                  const char* what) const;
  /// `whole` has part's dtype and size() times its elements (the flat collectives).
  void check_flat(const Tensor& whole, const Tensor& part, const char* op, const char* whole_name,
                  const char* part_name) const;

  /// How every backend words a failed collective: "[op] collective #sequence on rank R of S
  /// (backend) " followed by `what`.
  Error collective_error(const std::string& op, uint64_t sequence, const std::string& what) const;
  /// "timed out after T ms (a rank stopped calling collectives?)", T the group's timeout.
  std::string timed_out_text() const;

  int rank_;
  int size_;
};

/// A tensor's dtype and shape, "float32[2, 3]".
std::string describe_tensor(const Tensor& tensor);
/// How a backend describes a collective for EMBER_DISTRIBUTED_DEBUG=1 checks: the operation and
/// the shapes and dtypes of its tensors.
std::string describe_collective(const std::string& op, const std::vector<Tensor>& tensors);
/// Whether EMBER_DISTRIBUTED_DEBUG=1 (read once).
bool debug_enabled();
/// Whether EMBER_DISTRIBUTED_DEBUG=1 checks `op` with check_same_collective: every collective,
/// not send and recv (check_matching_p2p).
bool debug_checks(const std::string& op);

/// The bytes each rank contributes to an EMBER_DISTRIBUTED_DEBUG=1 check.
inline constexpr size_t kDescriptionBytes = 512;
/// EMBER_DISTRIBUTED_DEBUG=1, for every backend: `all_gather(mine, all)` gathers each rank's
/// kDescriptionBytes bytes into `all` (rank order) over the backend's own transport; then every
/// rank raises the same ember::Error naming the first rank whose description differs from rank
/// 0's. `size` is the group's size.
void check_same_collective(const std::string& description, int size,
                           const std::function<void(const char* mine, char* all)>& all_gather);
/// EMBER_DISTRIBUTED_DEBUG=1 for send and recv, which no all-gather can check (two ranks take
/// part; PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL checks neither): the two sides of a pair trade
/// describe_tensor() of their tensors before the data. Both sides call this with what they
/// traded and raise the same ember::Error, naming both tensors, when they differ in dtype or
/// shape, rather than receive garbage or hang; neither then moves the data. `is_send`: this
/// rank (`rank`) sends to `peer`.
void check_matching_p2p(bool is_send, int rank, int peer, int tag, const std::string& mine,
                        const std::string& theirs);

}  // namespace ember::distributed

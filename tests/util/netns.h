// Two machines on one: two network namespaces joined by a veth pair, with addresses 10.A.B.1 and
// 10.A.B.2 inside them only (iproute2's `ip netns`, as root). Each test run makes its own, with
// names of its pid, and removes them with every process in them, even when the test fails.
#pragma once

#include <string>

namespace ember::testing {

class TwoNodes {
 public:
  /// Why namespaces cannot be made here ("" when they can): not root, no `ip`, no permission.
  static std::string unavailable();
  /// Makes the namespaces and the link; an ember::Error saying which command failed otherwise.
  TwoNodes();
  /// Kills every process in the namespaces, then removes them. Never throws.
  ~TwoNodes();
  TwoNodes(const TwoNodes&) = delete;
  TwoNodes& operator=(const TwoNodes&) = delete;

  /// Node 0 or 1's address.
  std::string address(int node) const;
  /// The prefix that runs a command on node 0 or 1: "ip netns exec NAME ".
  std::string on(int node) const;
  /// SIGKILLs every process of the node: the machine dies.
  void kill_node(int node) const;
  /// Takes the link down at both ends: each node vanishes for the other without a word (no
  /// connection is reset; what is sent is lost), while each keeps its own address.
  void take_link_down() const;

 private:
  std::string name_[2];
  std::string subnet_;   // "10.A.B."
  std::string veth_[2];  // each node's end of the link
};

}  // namespace ember::testing

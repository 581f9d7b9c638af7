// torch.einsum, composed: each operand's subscripts are lined up on one list of letters (ellipsis
// dims first), operands are multiplied pairwise with the letters neither keeps summed by a
// batched matrix product, and the result is permuted to the output's order.
#include <algorithm>
#include <map>
#include <set>

#include "ember/ops/elementwise.h"
#include "ember/ops/linalg.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/reduce.h"
#include "ember/ops/views.h"

namespace ember {
namespace {

// A term's subscripts as labels: letters, and '.' for each dim the ellipsis covers.
struct Term {
  std::vector<char> labels;
};

std::vector<char> parse_term(const std::string& s, int64_t ndim, int64_t& ellipsis_dims,
                             const std::string& eq) {
  std::vector<char> labels;
  size_t dots = s.find("...");
  int64_t letters = 0;
  for (char c : s)
    if (std::isalpha(static_cast<unsigned char>(c))) ++letters;
  if (dots != std::string::npos) {
    int64_t e = ndim - letters;
    EMBER_CHECK(e >= 0, "[einsum] the subscripts '", s, "' of '", eq, "' have more letters than ",
                "the operand's ", ndim, " dims");
    ellipsis_dims = std::max(ellipsis_dims, e);
    for (size_t i = 0; i < s.size(); ++i) {
      if (i == dots) {
        // Ellipsis dims get labels '0'+k counted from the right, so broadcast ones line up.
        for (int64_t k = e; k > 0; --k) labels.push_back(static_cast<char>('0' + k - 1));
        i += 2;
      } else if (std::isalpha(static_cast<unsigned char>(s[i]))) {
        labels.push_back(s[i]);
      } else if (s[i] != ' ') {
        EMBER_CHECK(false, "[einsum] invalid subscript '", s[i], "' in '", eq, "'");
      }
    }
  } else {
    for (char c : s) {
      if (c == ' ') continue;
      EMBER_CHECK(std::isalpha(static_cast<unsigned char>(c)), "[einsum] invalid subscript '", c,
                  "' in '", eq, "'");
      labels.push_back(c);
    }
    EMBER_CHECK(static_cast<int64_t>(labels.size()) == ndim, "[einsum] the subscripts '", s,
                "' have ", labels.size(), " letters for an operand of ", ndim, " dims");
  }
  return labels;
}

// x with each repeated label (a diagonal, "ii") reduced to one dim.
Tensor take_diagonals(Tensor x, std::vector<char>& labels) {
  for (size_t i = 0; i < labels.size(); ++i)
    for (size_t j = i + 1; j < labels.size();) {
      if (labels[j] != labels[i]) {
        ++j;
        continue;
      }
      // diagonal() puts the diagonal last: move it back to position i.
      x = diagonal(x, 0, static_cast<int64_t>(i), static_cast<int64_t>(j));
      x = movedim(x, {-1}, {static_cast<int64_t>(i)});
      labels.erase(labels.begin() + static_cast<std::ptrdiff_t>(j));
    }
  return x;
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  EMBER_OP(einsum, equation, operands);
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  EMBER_CHECK(terms.size() == operands.size(), "[einsum] '", equation, "' has ", terms.size(),
              " operands' subscripts but ", operands.size(), " operands were given");
  int64_t ellipsis_dims = 0;
  std::vector<Tensor> xs;
  std::vector<std::vector<char>> labels;
  std::map<char, int64_t> counts;
  for (size_t i = 0; i < terms.size(); ++i) {
    std::vector<char> l = parse_term(terms[i], operands[i].dim(), ellipsis_dims, equation);
    Tensor x = take_diagonals(operands[i], l);
    for (char c : std::set<char>(l.begin(), l.end())) ++counts[c];
    xs.push_back(x);
    labels.push_back(l);
  }
  // The output: as given, or (implicit) the ellipsis then the letters used once, sorted.
  std::vector<char> out;
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    int64_t dummy = 0;
    size_t dots = rhs.find("...");
    int64_t rhs_letters = 0;
    for (char c : rhs)
      if (std::isalpha(static_cast<unsigned char>(c))) ++rhs_letters;
    out = parse_term(rhs, rhs_letters + (dots != std::string::npos ? ellipsis_dims : 0), dummy,
                     equation);
  } else {
    for (int64_t k = ellipsis_dims; k > 0; --k) out.push_back(static_cast<char>('0' + k - 1));
    for (auto& [c, n] : counts)
      if (n == 1 && std::isalpha(static_cast<unsigned char>(c))) out.push_back(c);
  }
  // Fold the operands left to right: a letter is summed out as soon as no later operand and not
  // the output uses it.
  Tensor acc = xs[0];
  std::vector<char> acc_l = labels[0];
  for (size_t k = 1; k <= xs.size(); ++k) {
    std::set<char> later(out.begin(), out.end());
    for (size_t j = k + 1; j < xs.size(); ++j) later.insert(labels[j].begin(), labels[j].end());
    if (k == xs.size()) {
      // Sum what the output does not keep.
      Dims sum_dims;
      std::vector<char> kept;
      for (size_t d = 0; d < acc_l.size(); ++d) {
        if (!later.count(acc_l[d]))
          sum_dims.push_back(static_cast<int64_t>(d));
        else
          kept.push_back(acc_l[d]);
      }
      // A sum, as PyTorch's: integers come out int64 (a product alone keeps their dtype).
      if (!sum_dims.empty()) acc = sum(acc, sum_dims);
      acc_l = kept;
      break;
    }
    const Tensor& b = xs[k];
    const std::vector<char>& b_l = labels[k];
    // Letters: batch (both, kept later), contracted (both, not kept), and each side's own.
    std::vector<char> batch, contract, left, right;
    for (char c : acc_l) {
      bool in_b = std::find(b_l.begin(), b_l.end(), c) != b_l.end();
      if (in_b)
        (later.count(c) ? batch : contract).push_back(c);
      else
        left.push_back(c);
    }
    for (char c : b_l)
      if (std::find(acc_l.begin(), acc_l.end(), c) == acc_l.end()) right.push_back(c);
    // Letters one side has alone and nothing later uses are summed first.
    auto drop_unused = [&](Tensor& t, std::vector<char>& l, std::vector<char>& own) {
      Dims dims;
      std::vector<char> kept, kept_own;
      for (size_t d = 0; d < l.size(); ++d) {
        bool own_letter = std::find(own.begin(), own.end(), l[d]) != own.end();
        if (own_letter && !later.count(l[d]))
          dims.push_back(static_cast<int64_t>(d));
        else
          kept.push_back(l[d]);
      }
      for (char c : own)
        if (later.count(c)) kept_own.push_back(c);
      if (!dims.empty()) t = sum(t, dims);
      l = kept;
      own = kept_own;
    };
    Tensor a = acc, bb = b;
    std::vector<char> a_l = acc_l, bl = b_l;
    drop_unused(a, a_l, left);
    drop_unused(bb, bl, right);
    // Permute a to (batch, left, contract) and b to (batch, contract, right); sizes by letter.
    auto size_of = [&](char c) {
      for (size_t d = 0; d < a_l.size(); ++d)
        if (a_l[d] == c) return a.size(static_cast<int64_t>(d));
      for (size_t d = 0; d < bl.size(); ++d)
        if (bl[d] == c) return bb.size(static_cast<int64_t>(d));
      return int64_t{1};
    };
    auto permuted = [](const Tensor& t, const std::vector<char>& l, const std::vector<char>& order) {
      Shape perm;
      for (char c : order)
        perm.push_back(std::find(l.begin(), l.end(), c) - l.begin());
      return t.permute(perm);
    };
    auto prod = [&](const std::vector<char>& ls) {
      int64_t n = 1;
      for (char c : ls) n *= size_of(c);
      return n;
    };
    std::vector<char> a_order = batch, b_order = batch;
    a_order.insert(a_order.end(), left.begin(), left.end());
    a_order.insert(a_order.end(), contract.begin(), contract.end());
    b_order.insert(b_order.end(), contract.begin(), contract.end());
    b_order.insert(b_order.end(), right.begin(), right.end());
    // Broadcast dims of size 1 (ellipsis) expand to the other side's size.
    Shape a_shape, b_shape;
    for (char c : a_order) a_shape.push_back(size_of(c));
    for (char c : b_order) b_shape.push_back(size_of(c));
    Tensor ap = permuted(a, a_l, a_order).expand(a_shape);
    Tensor bp = permuted(bb, bl, b_order).expand(b_shape);
    int64_t B = prod(batch), L = prod(left), K = prod(contract), R = prod(right);
    DType common = promote_types(ap.dtype(), bp.dtype());  // a side summed above is int64
    Tensor r = bmm(ap.reshape({B, L, K}).to(common), bp.reshape({B, K, R}).to(common));
    Shape r_shape;
    for (char c : batch) r_shape.push_back(size_of(c));
    for (char c : left) r_shape.push_back(size_of(c));
    for (char c : right) r_shape.push_back(size_of(c));
    acc = r.reshape(r_shape);
    acc_l = batch;
    acc_l.insert(acc_l.end(), left.begin(), left.end());
    acc_l.insert(acc_l.end(), right.begin(), right.end());
  }
  // The output's order (a letter it names that no operand had is an error).
  Shape perm;
  for (char c : out) {
    auto it = std::find(acc_l.begin(), acc_l.end(), c);
    EMBER_CHECK(it != acc_l.end(), "[einsum] output subscript '", c,
                "' does not appear in the equation's operands ('", equation, "')");
    perm.push_back(it - acc_l.begin());
  }
  EMBER_CHECK(perm.size() == acc_l.size(), "[einsum] internal: subscripts left over in '",
              equation, "'");
  return perm.empty() ? acc : acc.permute(perm);
}

}  // namespace ember

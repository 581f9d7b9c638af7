#include "ember/backend/cpu/conv_dnnl.h"

#include <atomic>

#include "ember/core/fork.h"

namespace ember::cpu {
namespace {
// The preference is kept in every build, so that it reads back as set; without oneDNN nothing
// consults it (the im2col path has no Winograd).
std::atomic<bool> g_allow_winograd{true};
}  // namespace
void set_allow_winograd(bool allow) { g_allow_winograd.store(allow); }
bool allow_winograd() { return g_allow_winograd.load(); }
}  // namespace ember::cpu

#if defined(EMBER_WITH_DNNL)

#include <unordered_map>
#include <vector>

#include "ember/backend/cpu/dnnl_util.h"
#include "ember/backend/cpu/thread_pool.h"

namespace ember::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;
using dnnl_util::Buffer;
using dnnl_util::engine;
using dnnl_util::reserve;
using dnnl_util::single_threaded;

struct Geometry {
  memory::dims src, weights, bias, dst, strides, dilates, pad_l, pad_r;
  bool grouped;
  dt type;  // of the input, weight, output and their gradients; bias and weight gradients: f32
  dnnl::algorithm alg;
};

// Winograd F(4x4, 3x3) does a 3x3 convolution's work in about 1/2.2 of the multiplies, and
// oneDNN has it for float32 forward, backward-data and backward-weights. On this repository's
// machine (AVX-512) it took 0.37-0.6 of direct's time per pass for ResNet's 3x3 layers of 64 to
// 512 channels at 4x4 to 28x28 (bench/ember_vs_libtorch.cpp's resnet18 rows), but 2.4 times
// longer for 512 channels at 2x2 and 8 times for a one-channel stem, where tiles are mostly
// padding or the transforms outweigh the products; oneDNN's own "auto" picked it in those losing
// cases, so the choice is made here. Its error is about 8 times direct's (2e-6 of the output's
// largest magnitude against 3e-7 at 512 channels), far inside float32 tolerances.
dnnl::algorithm choose_algorithm(const Geometry& g) {
  if (!g_allow_winograd.load(std::memory_order_relaxed) || g.grouped || g.type != dt::f32)
    return dnnl::algorithm::convolution_direct;
  const memory::dims& w = g.weights;  // O, I, kH, kW
  bool shape = w[2] == 3 && w[3] == 3 && g.strides == memory::dims{1, 1} &&
               g.dilates == memory::dims{0, 0} && w[0] >= 64 && w[1] >= 64;
  int64_t oh = g.dst[2], ow = g.dst[3];
  auto tiled = [](int64_t n) { return (n + 3) / 4 * 4; };
  bool tiles_mostly_used = oh >= 4 && ow >= 4 && 2 * oh * ow >= tiled(oh) * tiled(ow);
  return shape && tiles_mostly_used ? dnnl::algorithm::convolution_winograd
                                    : dnnl::algorithm::convolution_direct;
}

// What one pool thread computes of a convolution: images [n0, n0 + n) of the batch, output
// channels [o0, o0 + oc) and input channels [c0, c0 + cc). The batch is split where the
// activations outweigh the weights (each thread then reads all the weights, and backward sums each
// thread's weight gradient); the channels where the weights do (ResNet's last stages: 512 x 512 x
// 3 x 3 weights for 4 x 4 images), so that each weight is read, transformed and differentiated by
// one thread only.
struct Part {
  int64_t n0, n, o0, oc, c0, cc;
};

// The parts of `total` (batch or channels) for `slices` threads: channel parts on multiples of 16,
// the block of oneDNN's fast layouts.
std::vector<std::pair<int64_t, int64_t>> ranges(int64_t total, int64_t slices, int64_t align) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t s = 0; s < slices; ++s) {
    int64_t lo = total * s / slices / align * align, hi = total * (s + 1) / slices / align * align;
    if (s == slices - 1) hi = total;
    if (hi > lo) out.emplace_back(lo, hi - lo);
  }
  return out;
}

// Whether the weights outweigh the per-thread activations, so that threads split channels.
bool split_channels(const Tensor& x, const Tensor& w, const Tensor& out, int64_t slices,
                    const Conv2dParams& p) {
  if (slices < 2 || p.groups > 1) return false;
  return w.numel() * slices > x.numel() + out.numel() && w.size(0) >= 16 * slices &&
         w.size(1) >= 16 * slices;
}

Geometry geometry(const Part& part, const Tensor& x, const Tensor& w, const Tensor& out,
                  const Conv2dParams& p) {
  Geometry g;
  int64_t groups = p.groups;
  g.grouped = groups > 1;
  g.type = x.dtype() == kBFloat16 ? dt::bf16 : dt::f32;
  g.src = {part.n, part.cc, x.size(2), x.size(3)};
  g.dst = {part.n, part.oc, out.size(2), out.size(3)};
  if (g.grouped)
    g.weights = {groups, w.size(0) / groups, w.size(1), w.size(2), w.size(3)};
  else
    g.weights = {part.oc, part.cc, w.size(2), w.size(3)};
  g.bias = {part.oc};
  g.strides = {p.stride[0], p.stride[1]};
  g.dilates = {p.dilation[0] - 1, p.dilation[1] - 1};
  g.pad_l = {p.padding[0], p.padding[1]};
  // oneDNN wants the right padding that makes the output size come out exactly.
  for (int i = 0; i < 2; ++i) {
    int64_t in = x.size(2 + i), k = w.size(2 + i), o = out.size(2 + i);
    int64_t span = p.dilation[i] * (k - 1) + 1;
    g.pad_r.push_back((o - 1) * p.stride[i] + span - in - p.padding[i]);
  }
  g.alg = choose_algorithm(g);
  return g;
}

memory::desc md(const memory::dims& d, tag t, dt type = dt::f32) {
  return memory::desc(d, type, t);
}

// The user's NCHW tensor `t`'s part: dims `d` starting at (n0, c0), strided as `t`.
memory user_nchw(const Tensor& t, const memory::dims& d, int64_t n0, int64_t c0, dt type) {
  memory::dims strides = {t.size(1) * t.size(2) * t.size(3), t.size(2) * t.size(3), t.size(3), 1};
  return memory(memory::desc(d, type, strides), engine(),
                static_cast<char*>(t.data_ptr()) +
                    (n0 * strides[0] + c0 * strides[1]) * static_cast<int64_t>(t.element_size()));
}

// The user's OIHW weights' part (or all of a grouped convolution's, in goihw).
memory user_weights(const Tensor& w, const Geometry& g, const Part& part, dt type) {
  if (g.grouped) return memory(md(g.weights, tag::goihw, type), engine(), w.data_ptr());
  return user_nchw(w, g.weights, part.o0, part.c0, type);
}

dnnl::primitive_attr attr() { return dnnl_util::user_scratchpad_attr(); }

using Key = std::vector<int64_t>;
Key key(int kind, const Geometry& g, bool bias) {
  Key k{kind, static_cast<int64_t>(g.alg), static_cast<int64_t>(g.type), g.grouped, bias};
  for (const memory::dims* d :
       {&g.src, &g.weights, &g.dst, &g.strides, &g.dilates, &g.pad_l, &g.pad_r})
    k.insert(k.end(), d->begin(), d->end());
  return k;
}

// A built convolution and the layouts it chose. oneDNN's fast kernels want blocked layouts
// (nChw16c and friends): tensors are reordered into them and results back, which costs little
// next to the convolution itself.
struct Plan {
  dnnl::primitive prim;
  memory::desc scratch;
  memory::desc a, b, c;  // the primitive's layouts for its three tensor arguments
};

// The user's tensor as `want`: itself when the layouts agree, else a reordered copy in `buffer`.
memory in_layout(const memory::desc& want, const memory& user, Buffer& buffer, dnnl::stream& s) {
  if (want == user.get_desc()) return user;
  memory m(want, engine(), reserve(buffer, want.get_size()));
  dnnl::reorder(user, m).execute(s, const_cast<memory&>(user), m);
  return m;
}

// Memory in layout `want` for a result that must end up in `user`.
memory out_layout(const memory::desc& want, const memory& user, Buffer& buffer) {
  if (want == user.get_desc()) return user;
  return memory(want, engine(), reserve(buffer, want.get_size()));
}

void copy_back(const memory& computed, const memory& user, dnnl::stream& s) {
  if (computed.get_data_handle() == user.get_data_handle()) return;
  dnnl::reorder(computed, user)
      .execute(s, const_cast<memory&>(computed), const_cast<memory&>(user));
}

void run(const Plan& plan, std::unordered_map<int, memory> args, dnnl::stream& s) {
  Buffer buffer;
  args.emplace(DNNL_ARG_SCRATCHPAD,
               memory(plan.scratch, engine(), reserve(buffer, plan.scratch.get_size())));
  plan.prim.execute(s, args);
  s.wait();  // before `buffer` goes back to the cache
}

// The cached plan for `k`, built by make(g). Where oneDNN has no Winograd kernel for a shape (or
// this CPU), the plan is built for direct convolution instead.
template <typename Make>
Plan lookup(const Key& k, const Geometry& g, Make make) {
  return dnnl_util::plan_cache<Plan>().lookup(k, [&] {
    if (g.alg == dnnl::algorithm::convolution_winograd) try {
        return make(g);
      } catch (const dnnl::error&) {
      }
    Geometry direct = g;
    direct.alg = dnnl::algorithm::convolution_direct;
    return make(direct);
  });
}

dnnl::convolution_forward::primitive_desc forward_pd(const Geometry& g, bool bias) {
  memory::desc any_src = md(g.src, tag::any, g.type), any_w = md(g.weights, tag::any, g.type),
               any_dst = md(g.dst, tag::any, g.type);
  auto d = bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, g.alg, any_src,
                                                  any_w, md(g.bias, tag::x), any_dst, g.strides,
                                                  g.dilates, g.pad_l, g.pad_r)
                : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, g.alg, any_src,
                                                  any_w, any_dst, g.strides, g.dilates, g.pad_l,
                                                  g.pad_r);
  return dnnl::convolution_forward::primitive_desc(d, attr(), engine());
}

// Runs f(part, index) for each part on its own pool thread, oneDNN single-threaded inside.
template <typename F>
void for_parts(const std::vector<Part>& parts, F f) {
  parallel_for(0, static_cast<int64_t>(parts.size()), 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      single_threaded([&] { f(parts[static_cast<size_t>(i)], static_cast<size_t>(i)); });
  });
}

// The batch's parts, or the channels' (output channels when `output`, else input channels).
std::vector<Part> parts_of(const Tensor& x, const Tensor& w, const Tensor& out,
                           const Conv2dParams& p, bool output) {
  int64_t N = x.size(0), C = x.size(1), O = out.size(1);
  int64_t threads = in_parallel_region() ? 1 : std::max<int64_t>(1, get_num_threads());
  std::vector<Part> parts;
  if (split_channels(x, w, out, threads, p)) {
    for (auto [lo, len] : ranges(output ? O : C, threads, 16))
      parts.push_back(output ? Part{0, N, lo, len, 0, C} : Part{0, N, 0, O, lo, len});
  } else {
    for (auto [lo, len] : ranges(N, std::min(threads, std::max<int64_t>(N, 1)), 1))
      parts.push_back(Part{lo, len, 0, O, 0, C});
  }
  return parts;
}

}  // namespace

bool have_dnnl() { return true; }

void dnnl_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& out,
                 const Conv2dParams& p) {
  bool has_bias = bias.defined();
  Tensor bias32 = has_bias && bias.dtype() != kFloat32 ? bias.to(kFloat32) : bias;
  for_parts(parts_of(x, w, out, p, /*output=*/true), [&](const Part& part, size_t) {
    Geometry g = geometry(part, x, w, out, p);
    Plan plan = lookup(key(0, g, has_bias), g, [&](const Geometry& g) {
      auto pd = forward_pd(g, has_bias);
      return Plan{dnnl::convolution_forward(pd), pd.scratchpad_desc(), pd.src_desc(),
                  pd.weights_desc(), pd.dst_desc()};
    });
    dnnl::stream s(engine());
    Buffer bx, bw, bo;
    memory user_out = user_nchw(out, g.dst, part.n0, part.o0, g.type);
    memory dst = out_layout(plan.c, user_out, bo);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, in_layout(plan.a, user_nchw(x, g.src, part.n0, part.c0, g.type), bx, s)},
        {DNNL_ARG_WEIGHTS, in_layout(plan.b, user_weights(w, g, part, g.type), bw, s)},
        {DNNL_ARG_DST, dst}};
    if (has_bias)
      args.emplace(DNNL_ARG_BIAS,
                   memory(md(g.bias, tag::x), engine(), bias32.data_ptr<float>() + part.o0));
    run(plan, std::move(args), s);
    copy_back(dst, user_out, s);
    s.wait();
  });
}

void dnnl_conv2d_backward(const Tensor& x, const Tensor& w, const Tensor& grad_out,
                          const Tensor& grad_x, const Tensor& grad_w, const Tensor& grad_b,
                          const Conv2dParams& p) {
  // The input's gradient: by batch, or by input channel (each part reads its weights' columns).
  if (grad_x.defined()) {
    for_parts(parts_of(x, w, grad_out, p, /*output=*/false), [&](const Part& part, size_t) {
      Geometry g = geometry(part, x, w, grad_out, p);
      Plan plan = lookup(key(1, g, false), g, [&](const Geometry& g) {
        auto d = dnnl::convolution_backward_data::desc(
            g.alg, md(g.src, tag::any, g.type), md(g.weights, tag::any, g.type),
            md(g.dst, tag::any, g.type), g.strides, g.dilates, g.pad_l, g.pad_r);
        dnnl::convolution_backward_data::primitive_desc pd(d, attr(), engine(),
                                                           forward_pd(g, false));
        return Plan{dnnl::convolution_backward_data(pd), pd.scratchpad_desc(), pd.diff_dst_desc(),
                    pd.weights_desc(), pd.diff_src_desc()};
      });
      dnnl::stream s(engine());
      Buffer bd, bw, bx;
      memory user_src_diff = user_nchw(grad_x, g.src, part.n0, part.c0, g.type);
      memory src_diff = out_layout(plan.c, user_src_diff, bx);
      run(plan,
          {{DNNL_ARG_DIFF_DST,
            in_layout(plan.a, user_nchw(grad_out, g.dst, part.n0, part.o0, g.type), bd, s)},
           {DNNL_ARG_WEIGHTS, in_layout(plan.b, user_weights(w, g, part, g.type), bw, s)},
           {DNNL_ARG_DIFF_SRC, src_diff}},
          s);
      copy_back(src_diff, user_src_diff, s);
      s.wait();
    });
  }
  if (!grad_w.defined() && !grad_b.defined()) return;
  // The weights' gradient: by output channel, each part writing its rows of one float32 sum; or by
  // batch, each part summing its own, added up after.
  bool has_bias = grad_b.defined();
  std::vector<Part> parts = parts_of(x, w, grad_out, p, /*output=*/true);
  bool by_channel = parts.size() > 1 && parts[0].n == x.size(0);
  size_t sums = by_channel ? 1 : parts.size();
  std::vector<Tensor> part_w(sums), part_b(sums);
  for (size_t i = 0; i < sums; ++i) {
    part_w[i] = empty(w.sizes(), kFloat32);
    if (has_bias) part_b[i] = empty({w.size(0)}, kFloat32);
  }
  for_parts(parts, [&](const Part& part, size_t index) {
    size_t into = by_channel ? 0 : index;
    Geometry g = geometry(part, x, w, grad_out, p);
    Plan plan = lookup(key(2, g, has_bias), g, [&](const Geometry& g) {
      memory::desc any_src = md(g.src, tag::any, g.type), any_w = md(g.weights, tag::any),
                   any_dst = md(g.dst, tag::any, g.type);
      auto d = has_bias
                   ? dnnl::convolution_backward_weights::desc(
                         g.alg, any_src, any_w, md(g.bias, tag::x), any_dst, g.strides, g.dilates,
                         g.pad_l, g.pad_r)
                   : dnnl::convolution_backward_weights::desc(
                         g.alg, any_src, any_w, any_dst, g.strides, g.dilates, g.pad_l, g.pad_r);
      dnnl::convolution_backward_weights::primitive_desc pd(d, attr(), engine(),
                                                            forward_pd(g, has_bias));
      return Plan{dnnl::convolution_backward_weights(pd), pd.scratchpad_desc(), pd.src_desc(),
                  pd.diff_dst_desc(), pd.diff_weights_desc()};
    });
    dnnl::stream s(engine());
    Buffer bs, bd, bw;
    memory user_w_diff = user_weights(part_w[into], g, part, dt::f32);
    memory w_diff = out_layout(plan.c, user_w_diff, bw);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, in_layout(plan.a, user_nchw(x, g.src, part.n0, part.c0, g.type), bs, s)},
        {DNNL_ARG_DIFF_DST,
         in_layout(plan.b, user_nchw(grad_out, g.dst, part.n0, part.o0, g.type), bd, s)},
        {DNNL_ARG_DIFF_WEIGHTS, w_diff}};
    if (has_bias)
      args.emplace(DNNL_ARG_DIFF_BIAS,
                   memory(md(g.bias, tag::x), engine(), part_b[into].data_ptr<float>() + part.o0));
    run(plan, std::move(args), s);
    copy_back(w_diff, user_w_diff, s);
    s.wait();
  });
  // Summed in float32, then rounded once when the gradient is bfloat16.
  auto reduce = [&](std::vector<Tensor>& parts_sum, const Tensor& dst) {
    if (!dst.defined()) return;
    Tensor sum = parts_sum[0];
    float* acc = sum.data_ptr<float>();
    for (size_t i = 1; i < parts_sum.size(); ++i) {
      const float* add = parts_sum[i].data_ptr<float>();
      for (int64_t e = 0; e < sum.numel(); ++e) acc[e] += add[e];
    }
    TensorIter it(dst, {sum});
    copy_cpu(it);
  };
  reduce(part_w, grad_w);
  if (has_bias) reduce(part_b, grad_b);
}

}  // namespace ember::cpu

#else  // no oneDNN: conv.cpp uses its own im2col path

namespace ember::cpu {
bool have_dnnl() { return false; }
void dnnl_conv2d(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Conv2dParams&) {
  EMBER_FAIL("[conv2d] ember was built without oneDNN");
}
void dnnl_conv2d_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                          const Tensor&, const Conv2dParams&) {
  EMBER_FAIL("[conv2d] ember was built without oneDNN");
}
}  // namespace ember::cpu

#endif

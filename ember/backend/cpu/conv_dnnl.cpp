#include "ember/backend/cpu/conv_dnnl.h"
#include "ember/core/fork.h"

#if defined(EMBER_WITH_DNNL)

#include <atomic>
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

std::atomic<bool> g_allow_winograd{true};

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

Geometry geometry(int64_t n, const Tensor& x, const Tensor& w, const Tensor& out,
                  const Conv2dParams& p) {
  Geometry g;
  int64_t groups = p.groups;
  g.grouped = groups > 1;
  g.type = x.dtype() == kBFloat16 ? dt::bf16 : dt::f32;
  g.src = {n, x.size(1), x.size(2), x.size(3)};
  g.dst = {n, out.size(1), out.size(2), out.size(3)};
  if (g.grouped)
    g.weights = {groups, w.size(0) / groups, w.size(1), w.size(2), w.size(3)};
  else
    g.weights = {w.size(0), w.size(1), w.size(2), w.size(3)};
  g.bias = {w.size(0)};
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

dnnl::primitive_attr attr() { return dnnl_util::user_scratchpad_attr(); }

using Key = std::vector<int64_t>;
Key key(int kind, int64_t n, const Tensor& x, const Tensor& w, const Conv2dParams& p, bool bias,
        const Geometry& g) {
  return Key{kind,
             static_cast<int64_t>(g.alg),
             n,
             x.size(1),
             x.size(2),
             x.size(3),
             w.size(0),
             w.size(2),
             w.size(3),
             p.stride[0],
             p.stride[1],
             p.padding[0],
             p.padding[1],
             p.dilation[0],
             p.dilation[1],
             p.groups,
             bias ? 1 : 0,
             static_cast<int64_t>(x.dtype())};
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

// Splits the batch into one slice per pool thread and calls f(n0, n, slice_index) for each.
template <typename F>
void for_batch_slices(int64_t N, F f) {
  int64_t slices = std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), N));
  if (in_parallel_region()) slices = 1;
  parallel_for(0, slices, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t s = lo; s < hi; ++s) {
      int64_t n0 = N * s / slices, n1 = N * (s + 1) / slices;
      if (n1 > n0) single_threaded([&] { f(n0, n1 - n0, s); });
    }
  });
}

// The address of element `offset` of t (float32 or bfloat16).
void* ptr(const Tensor& t, int64_t offset = 0) {
  return static_cast<char*>(t.data_ptr()) + offset * static_cast<int64_t>(t.element_size());
}

tag weights_tag(const Geometry& g) { return g.grouped ? tag::goihw : tag::oihw; }

}  // namespace

bool have_dnnl() { return true; }

void set_allow_winograd(bool allow) { g_allow_winograd.store(allow); }
bool allow_winograd() { return g_allow_winograd.load(); }

void dnnl_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& out,
                 const Conv2dParams& p) {
  int64_t x_stride = x.size(1) * x.size(2) * x.size(3),
          o_stride = out.size(1) * out.size(2) * out.size(3);
  bool has_bias = bias.defined();
  Tensor bias32 = has_bias && bias.dtype() != kFloat32 ? bias.to(kFloat32) : bias;
  for_batch_slices(x.size(0), [&](int64_t n0, int64_t n, int64_t) {
    Geometry g = geometry(n, x, w, out, p);
    Plan plan = lookup(key(0, n, x, w, p, has_bias, g), g, [&](const Geometry& g) {
      auto pd = forward_pd(g, has_bias);
      return Plan{dnnl::convolution_forward(pd), pd.scratchpad_desc(), pd.src_desc(),
                  pd.weights_desc(), pd.dst_desc()};
    });
    dnnl::stream s(engine());
    Buffer bx, bw, bo;
    memory user_out(md(g.dst, tag::nchw, g.type), engine(), ptr(out, n0 * o_stride));
    memory dst = out_layout(plan.c, user_out, bo);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC,
         in_layout(plan.a, memory(md(g.src, tag::nchw, g.type), engine(), ptr(x, n0 * x_stride)),
                   bx, s)},
        {DNNL_ARG_WEIGHTS,
         in_layout(plan.b, memory(md(g.weights, weights_tag(g), g.type), engine(), ptr(w)), bw, s)},
        {DNNL_ARG_DST, dst}};
    if (has_bias) args.emplace(DNNL_ARG_BIAS, memory(md(g.bias, tag::x), engine(), ptr(bias32)));
    run(plan, std::move(args), s);
    copy_back(dst, user_out, s);
    s.wait();
  });
}

void dnnl_conv2d_backward(const Tensor& x, const Tensor& w, const Tensor& grad_out,
                          const Tensor& grad_x, const Tensor& grad_w, const Tensor& grad_b,
                          const Conv2dParams& p) {
  int64_t N = x.size(0);
  int64_t x_stride = x.size(1) * x.size(2) * x.size(3);
  int64_t o_stride = grad_out.size(1) * grad_out.size(2) * grad_out.size(3);
  bool want_w = grad_w.defined() || grad_b.defined();
  bool has_bias = grad_b.defined();
  int64_t slices = std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), N));
  // Each slice sums its own weight and bias gradients; they are added up at the end.
  std::vector<Tensor> part_w(static_cast<size_t>(slices)), part_b(static_cast<size_t>(slices));
  for_batch_slices(N, [&](int64_t n0, int64_t n, int64_t slice) {
    Geometry g = geometry(n, x, w, grad_out, p);
    dnnl::stream s(engine());
    memory user_dst_diff(md(g.dst, tag::nchw, g.type), engine(), ptr(grad_out, n0 * o_stride));
    if (grad_x.defined()) {
      Plan plan = lookup(key(1, n, x, w, p, false, g), g, [&](const Geometry& g) {
        auto d = dnnl::convolution_backward_data::desc(
            g.alg, md(g.src, tag::any, g.type), md(g.weights, tag::any, g.type),
            md(g.dst, tag::any, g.type), g.strides, g.dilates, g.pad_l, g.pad_r);
        dnnl::convolution_backward_data::primitive_desc pd(d, attr(), engine(),
                                                           forward_pd(g, false));
        return Plan{dnnl::convolution_backward_data(pd), pd.scratchpad_desc(), pd.diff_dst_desc(),
                    pd.weights_desc(), pd.diff_src_desc()};
      });
      Buffer bd, bw, bx;
      memory user_src_diff(md(g.src, tag::nchw, g.type), engine(), ptr(grad_x, n0 * x_stride));
      memory src_diff = out_layout(plan.c, user_src_diff, bx);
      run(plan,
          {{DNNL_ARG_DIFF_DST, in_layout(plan.a, user_dst_diff, bd, s)},
           {DNNL_ARG_WEIGHTS,
            in_layout(plan.b, memory(md(g.weights, weights_tag(g), g.type), engine(), ptr(w)), bw,
                      s)},
           {DNNL_ARG_DIFF_SRC, src_diff}},
          s);
      copy_back(src_diff, user_src_diff, s);
    }
    if (want_w) {
      Plan plan = lookup(key(2, n, x, w, p, has_bias, g), g, [&](const Geometry& g) {
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
      Tensor& pw = part_w[static_cast<size_t>(slice)];
      pw = empty(w.sizes(), kFloat32);
      Buffer bs, bd, bw;
      memory user_w_diff(md(g.weights, weights_tag(g)), engine(), ptr(pw));
      memory w_diff = out_layout(plan.c, user_w_diff, bw);
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC,
           in_layout(plan.a, memory(md(g.src, tag::nchw, g.type), engine(), ptr(x, n0 * x_stride)),
                     bs, s)},
          {DNNL_ARG_DIFF_DST, in_layout(plan.b, user_dst_diff, bd, s)},
          {DNNL_ARG_DIFF_WEIGHTS, w_diff}};
      if (has_bias) {
        Tensor& pb = part_b[static_cast<size_t>(slice)];
        pb = empty({w.size(0)}, kFloat32);
        args.emplace(DNNL_ARG_DIFF_BIAS, memory(md(g.bias, tag::x), engine(), ptr(pb)));
      }
      run(plan, std::move(args), s);
      copy_back(w_diff, user_w_diff, s);
    }
    s.wait();
  });
  // Summed in float32, then rounded once when the gradient is bfloat16.
  auto reduce = [&](std::vector<Tensor>& parts, const Tensor& dst) {
    if (!dst.defined()) return;
    Tensor sum = dst.dtype() == kFloat32 ? dst : empty(dst.sizes(), kFloat32);
    float* out = static_cast<float*>(sum.data_ptr());
    std::fill(out, out + sum.numel(), 0.0f);
    for (const Tensor& part : parts) {
      if (!part.defined()) continue;
      const float* p = static_cast<const float*>(part.data_ptr());
      for (int64_t i = 0; i < part.numel(); ++i) out[i] += p[i];
    }
    if (!sum.is_same(dst)) {
      TensorIter it(dst, {sum});
      copy_cpu(it);
    }
  };
  if (want_w) {
    reduce(part_w, grad_w);
    reduce(part_b, grad_b);
  }
}

}  // namespace ember::cpu

#else  // no oneDNN: conv.cpp uses its own im2col path

namespace ember::cpu {
bool have_dnnl() { return false; }
void set_allow_winograd(bool) {}
bool allow_winograd() { return false; }
void dnnl_conv2d(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Conv2dParams&) {
  EMBER_FAIL("[conv2d] ember was built without oneDNN");
}
void dnnl_conv2d_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                          const Tensor&, const Conv2dParams&) {
  EMBER_FAIL("[conv2d] ember was built without oneDNN");
}
}  // namespace ember::cpu

#endif

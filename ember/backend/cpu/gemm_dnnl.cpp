#include "ember/backend/cpu/gemm_dnnl.h"

#include <cstring>

#include "ember/backend/cpu/bf16_kernels.h"

#include "ember/core/error.h"

#if defined(EMBER_WITH_DNNL)

#include <unordered_map>

#include "ember/backend/cpu/dnnl_util.h"

namespace ember::cpu {
namespace {

using dnnl::memory;
using dt = memory::data_type;

struct Plan {
  dnnl::primitive prim;
  memory::desc scratch, a, b, c;
};

int64_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// A row-major (rows x cols) operand, or its transpose stored column-major, with leading dim ld.
memory::desc operand(dt type, int64_t rows, int64_t cols, bool trans, int64_t ld) {
  return memory::desc({rows, cols}, type, trans ? memory::dims{1, ld} : memory::dims{ld, 1});
}

Plan plan_for(dt type, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
              int64_t lda, int64_t ldb, float beta, int64_t ldc) {
  dnnl_util::PlanCache<Plan>::Key key{static_cast<int64_t>(type), ta, tb, m, n, k, lda, ldb,
                                      ldc, bits(alpha), bits(beta)};
  return dnnl_util::plan_cache<Plan>().lookup(key, [&] {
    memory::desc a = operand(type, m, k, ta, lda), b = operand(type, k, n, tb, ldb);
    memory::desc c({m, n}, type, memory::dims{ldc, 1});
    dnnl::primitive_attr attr = dnnl_util::user_scratchpad_attr();
    if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
    if (beta != 0.0f) {
      dnnl::post_ops ops;
      ops.append_sum(beta);
      attr.set_post_ops(ops);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, dnnl_util::engine());
    return Plan{dnnl::matmul(pd), pd.scratchpad_desc(), a, b, c};
  });
}

template <typename T>
void run(dt type, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const T* a,
         int64_t lda, const T* b, int64_t ldb, float beta, T* c, int64_t ldc) {
  Plan plan = plan_for(type, ta, tb, m, n, k, alpha, lda, ldb, beta, ldc);
  dnnl_util::single_threaded([&] {
    dnnl::engine& e = dnnl_util::engine();
    dnnl::stream s(e);
    dnnl_util::Buffer scratch;
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, memory(plan.a, e, const_cast<T*>(a))},
        {DNNL_ARG_WEIGHTS, memory(plan.b, e, const_cast<T*>(b))},
        {DNNL_ARG_DST, memory(plan.c, e, c)},
        {DNNL_ARG_SCRATCHPAD,
         memory(plan.scratch, e, dnnl_util::reserve(scratch, plan.scratch.get_size()))}};
    plan.prim.execute(s, args);
    s.wait();  // before `scratch` goes back to the cache
  });
}

}  // namespace

void dnnl_bf16_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const BFloat16* a, int64_t lda, const BFloat16* b, int64_t ldb, float beta,
                    BFloat16* c, int64_t ldc) {
  EMBER_ASSERT(have_bf16_kernels(), "dnnl_bf16_gemm called without bfloat16 kernels");
  run(dt::bf16, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

bool have_dnnl_sgemm() { return true; }

void dnnl_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  run(dt::f32, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace ember::cpu

#else  // no oneDNN: bfloat16 products go through float32 (blas.cpp)

namespace ember::cpu {
void dnnl_bf16_gemm(bool, bool, int64_t, int64_t, int64_t, float, const BFloat16*, int64_t,
                    const BFloat16*, int64_t, float, BFloat16*, int64_t) {
  EMBER_FAIL("[matmul] ember was built without oneDNN");
}
bool have_dnnl_sgemm() { return false; }
void dnnl_sgemm(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                int64_t, float, float*, int64_t) {
  EMBER_FAIL("[matmul] ember was built without oneDNN");
}
}  // namespace ember::cpu

#endif

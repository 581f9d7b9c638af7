// Sequence models, ember against libtorch (Debian's 1.13) in one process, on 1 and 2 threads, as
// bench/ember_vs_libtorch.cpp does (the same harness and thread rules): one training step of
//   gpt:  nanoGPT's GPT at shakespeare_char's shape scaled to a CPU (4 layers, 4 heads, 256 wide,
//         block 128, batch 16, 65 characters), AdamW and clipping at 1; libtorch's attention is
//         what nanoGPT runs under PyTorch 1.13 (masked scores, softmax, weights times values);
//   lstm: a word-level language model (embedding 10000 x 256, LSTM 2 x 256, decoder to 10000,
//         batch 32, 35 steps; pytorch/examples' word_language_model at that size), SGD.
// One JSON object per line, ratio = ember / libtorch; ms per step.
// With --attention: scaled_dot_product_attention forward and backward (1 x 4 heads x L x 64,
// causal) at L = 1024 and 4096, ember's fused kernel against ember's math path (the L x L
// weights) and libtorch 1.13's (which has only the math path): milliseconds and the peak of
// ember's allocator above what the inputs hold.
//
//   build/release/bench/ember-sequence-bench [--filter=gpt] [--threads=1,2] [--repeats=5]
//   build/release/bench/ember-sequence-bench --attention [--threads=1,2]
#include <cblas.h>
#include <torch/torch.h>

#include <cmath>
#include <iostream>

#include "bench/harness.h"
#include "ember/ember.h"

namespace {

constexpr int64_t kVocab = 65, kBlock = 128, kBatch = 16, kLayers = 4, kHeads = 4, kEmbd = 256;
constexpr int64_t kWords = 10000, kHidden = 256, kSteps = 35, kLstmBatch = 32;

// nanoGPT's Block in libtorch.
struct TorchBlock : torch::nn::Module {
  torch::nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  torch::nn::Linear c_attn{nullptr}, attn_proj{nullptr}, c_fc{nullptr}, mlp_proj{nullptr};
  torch::Tensor mask;
  TorchBlock() {
    ln_1 = register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kEmbd})));
    c_attn = register_module("c_attn", torch::nn::Linear(kEmbd, 3 * kEmbd));
    attn_proj = register_module("attn_proj", torch::nn::Linear(kEmbd, kEmbd));
    ln_2 = register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kEmbd})));
    c_fc = register_module("c_fc", torch::nn::Linear(kEmbd, 4 * kEmbd));
    mlp_proj = register_module("mlp_proj", torch::nn::Linear(4 * kEmbd, kEmbd));
    mask = register_buffer("bias", torch::ones({kBlock, kBlock}).tril().view({1, 1, kBlock, kBlock}));
  }
  torch::Tensor attn(const torch::Tensor& x) {
    int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    auto qkv = c_attn->forward(x).split(C, 2);
    auto heads = [&](const torch::Tensor& t) {
      return t.view({B, T, kHeads, C / kHeads}).transpose(1, 2);
    };
    torch::Tensor q = heads(qkv[0]), k = heads(qkv[1]), v = heads(qkv[2]);
    torch::Tensor att = q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(double(C / kHeads)));
    att = att.masked_fill(mask.slice(2, 0, T).slice(3, 0, T) == 0,
                          -std::numeric_limits<float>::infinity());
    att = torch::softmax(att, -1);
    torch::Tensor y = att.matmul(v).transpose(1, 2).contiguous().view({B, T, C});
    return attn_proj->forward(y);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = x + attn(ln_1->forward(x));
    return x + mlp_proj->forward(torch::gelu(c_fc->forward(ln_2->forward(x))));
  }
};

struct TorchGPT : torch::nn::Module {
  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  std::vector<std::shared_ptr<TorchBlock>> blocks;
  torch::nn::LayerNorm ln_f{nullptr};
  TorchGPT() {
    wte = register_module("wte", torch::nn::Embedding(kVocab, kEmbd));
    wpe = register_module("wpe", torch::nn::Embedding(kBlock, kEmbd));
    for (int64_t i = 0; i < kLayers; ++i)
      blocks.push_back(register_module("h" + std::to_string(i), std::make_shared<TorchBlock>()));
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kEmbd})));
  }
  torch::Tensor loss(const torch::Tensor& idx, const torch::Tensor& targets) {
    torch::Tensor x = wte->forward(idx) + wpe->forward(torch::arange(idx.size(1)));
    for (auto& b : blocks) x = b->forward(x);
    torch::Tensor logits = torch::nn::functional::linear(ln_f->forward(x), wte->weight);  // tied
    return torch::nn::functional::cross_entropy(logits.view({-1, kVocab}), targets.view({-1}));
  }
};

struct TorchLstmLM : torch::nn::Module {
  torch::nn::Embedding encoder{nullptr};
  torch::nn::LSTM rnn{nullptr};
  torch::nn::Linear decoder{nullptr};
  TorchLstmLM() {
    encoder = register_module("encoder", torch::nn::Embedding(kWords, kHidden));
    rnn = register_module("rnn", torch::nn::LSTM(torch::nn::LSTMOptions(kHidden, kHidden).num_layers(2)));
    decoder = register_module("decoder", torch::nn::Linear(kHidden, kWords));
  }
  torch::Tensor loss(const torch::Tensor& x, const torch::Tensor& y) {
    torch::Tensor out = std::get<0>(rnn->forward(encoder->forward(x)));
    return torch::nn::functional::cross_entropy(decoder->forward(out).view({-1, kWords}),
                                                y.view({-1}));
  }
};

struct Workload {
  std::string name;
  std::function<void()> ember, torch;
};

std::vector<Workload> make_workloads(const std::string& filter) {
  std::vector<Workload> w;
  auto want = [&](const std::string& n) { return filter.empty() || n.find(filter) != std::string::npos; };
  if (want("gpt_train_step")) {
    ember::models::GPTConfig c{kBlock, kVocab, kLayers, kHeads, kEmbd, 0.0, true};
    auto em = std::make_shared<ember::models::GPT>(c);
    auto eopt = std::make_shared<ember::optim::AdamW>(
        em->parameters(), ember::optim::AdamOptions(1e-3).with_betas(0.9, 0.99).with_weight_decay(0.1));
    ember::Tensor ex = ember::randint(0, kVocab, {kBatch, kBlock}),
                  ey = ember::randint(0, kVocab, {kBatch, kBlock});
    auto tm = std::make_shared<TorchGPT>();
    auto topt = std::make_shared<torch::optim::AdamW>(
        tm->parameters(),
        torch::optim::AdamWOptions(1e-3).betas({0.9, 0.99}).weight_decay(0.1));
    torch::Tensor tx = torch::randint(0, kVocab, {kBatch, kBlock}),
                  ty = torch::randint(0, kVocab, {kBatch, kBlock});
    w.push_back({"gpt_train_step",
                 [=] {
                   ember::Tensor loss = em->forward(ex, ey).second;
                   eopt->zero_grad();
                   loss.backward();
                   ember::nn::utils::clip_grad_norm_(em->parameters(), 1.0);
                   eopt->step();
                 },
                 [=] {
                   torch::Tensor loss = tm->loss(tx, ty);
                   topt->zero_grad();
                   loss.backward();
                   torch::nn::utils::clip_grad_norm_(tm->parameters(), 1.0);
                   topt->step();
                 }});
  }
  if (want("lstm_lm_train_step")) {
    auto enc = std::make_shared<ember::nn::Embedding>(kWords, kHidden);
    auto rnn = std::make_shared<ember::nn::LSTM>(ember::nn::RNNOptions(kHidden, kHidden).with_num_layers(2));
    auto dec = std::make_shared<ember::nn::Linear>(kHidden, kWords);
    std::vector<ember::Tensor> params;
    for (ember::nn::Module* m : {static_cast<ember::nn::Module*>(enc.get()),
                                 static_cast<ember::nn::Module*>(rnn.get()),
                                 static_cast<ember::nn::Module*>(dec.get())})
      for (const ember::Tensor& p : m->parameters()) params.push_back(p);
    auto eopt = std::make_shared<ember::optim::SGD>(params, ember::optim::SGDOptions(20.0));
    ember::Tensor ex = ember::randint(0, kWords, {kSteps, kLstmBatch}),
                  ey = ember::randint(0, kWords, {kSteps, kLstmBatch});
    auto tm = std::make_shared<TorchLstmLM>();
    auto topt = std::make_shared<torch::optim::SGD>(tm->parameters(), torch::optim::SGDOptions(20.0));
    torch::Tensor tx = torch::randint(0, kWords, {kSteps, kLstmBatch}),
                  ty = torch::randint(0, kWords, {kSteps, kLstmBatch});
    w.push_back({"lstm_lm_train_step",
                 [=] {
                   ember::Tensor out = rnn->forward(enc->forward(ex));
                   ember::Tensor loss = ember::nn::functional::cross_entropy(
                       dec->forward(out).view({-1, kWords}), ey.view({-1}));
                   eopt->zero_grad();
                   loss.backward();
                   ember::nn::utils::clip_grad_norm_(params, 0.25);
                   eopt->step();
                 },
                 [=] {
                   torch::Tensor loss = tm->loss(tx, ty);
                   topt->zero_grad();
                   loss.backward();
                   torch::nn::utils::clip_grad_norm_(tm->parameters(), 0.25);
                   topt->step();
                 }});
  }
  return w;
}

// Milliseconds of one call (best of `repeats` after a warm-up) and ember's peak allocation above
// the bytes allocated before it.
struct Measure {
  double ms;
  int64_t peak_bytes;
};
Measure measure(const std::function<void()>& f, int repeats) {
  ember::CachingAllocator& alloc = ember::device_backend(ember::kCPU).allocator(0);
  f();
  int64_t before = alloc.stats().allocated_bytes[ember::kAllPools].current;
  alloc.reset_peak_stats();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    double t0 = bench::now();
    f();
    best = std::min(best, bench::now() - t0);
  }
  int64_t peak = alloc.stats().allocated_bytes[ember::kAllPools].peak - before;
  return {best * 1e3, peak};
}

void attention_rows(int threads, int repeats) {
  for (int64_t L : {1024, 4096}) {
    ember::Tensor q = ember::randn({1, 4, L, 64}).requires_grad_(),
                  k = ember::randn({1, 4, L, 64}).requires_grad_(),
                  v = ember::randn({1, 4, L, 64}).requires_grad_();
    auto run = [&](bool fused) {
      return [&, fused] {
        ember::Tensor o = fused ? ember::scaled_dot_product_attention(q, k, v, {}, 0, true)
                                : std::get<0>(ember::attention_math(q, k, v, {}, 0, true));
        o.sum().backward();
        q.set_grad(ember::Tensor());
        k.set_grad(ember::Tensor());
        v.set_grad(ember::Tensor());
      };
    };
    Measure fused = measure(run(true), repeats), math = measure(run(false), repeats);
    torch::Tensor tq = torch::randn({1, 4, L, 64}).requires_grad_(),
                  tk = torch::randn({1, 4, L, 64}).requires_grad_(),
                  tv = torch::randn({1, 4, L, 64}).requires_grad_();
    Measure torch_math = measure(
        [&] {
          torch::Tensor o = std::get<0>(at::_scaled_dot_product_attention(tq, tk, tv, {}, 0.0,
                                                                          false, true));
          o.sum().backward();
          tq.mutable_grad().reset();
          tk.mutable_grad().reset();
          tv.mutable_grad().reset();
        },
        repeats);
    std::printf(
        "{\"name\": \"sdpa_causal_L%lld\", \"threads\": %d, \"fused_ms\": %.1f, "
        "\"math_ms\": %.1f, \"libtorch_math_ms\": %.1f, \"fused_peak_mib\": %.1f, "
        "\"math_peak_mib\": %.1f, \"scores_mib\": %.1f, \"time_ratio\": %.3f}\n",
        static_cast<long long>(L), threads, fused.ms, math.ms, torch_math.ms,
        fused.peak_bytes / 1048576.0, math.peak_bytes / 1048576.0,
        4.0 * L * L * 4 / 1048576.0, fused.ms / math.ms);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string filter;
  std::vector<int> threads = {1, 2};
  bench::Options options;
  bool attention = false;
  options.repeats = 5;
  options.target_seconds = 1.0;  // a step takes 0.1-0.6 s
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--filter=", 0) == 0)
      filter = a.substr(9);
    else if (a.rfind("--threads=", 0) == 0)
      threads = bench::parse_threads(a.substr(10));
    else if (a.rfind("--repeats=", 0) == 0)
      options.repeats = std::stoi(a.substr(10));
    else if (a == "--attention")
      attention = true;
    else {
      std::cerr << "usage: ember-sequence-bench [--attention] [--filter=SUBSTRING] "
                   "[--threads=1,2] [--repeats=N]\n";
      return 2;
    }
  }
  try {
    for (int t : threads) {
      ember::set_num_threads(t);
      at::set_num_threads(t);
      if (attention) {
        openblas_set_num_threads(t);  // libtorch's products; ember's kernel splits on its pool
        attention_rows(t, std::max(1, options.repeats / 2));
        continue;
      }
      for (const Workload& w : make_workloads(filter)) {
        bench::Result r = bench::compare(
            w.ember, w.torch, [] { openblas_set_num_threads(1); },
            [t] { openblas_set_num_threads(t); }, options);
        bench::print_json(w.name, t, r.ember * 1e3, r.libtorch * 1e3, "ms");
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "ember-sequence-bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

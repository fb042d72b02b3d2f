// Graphs of the sizes an engineer inspects, for graft-inspect's tests: an
// MLP's loss, a transformer's value_and_grad with any number of blocks, and
// an RNN written with scan. Parameters are nested maps, so inputs carry
// pytree names such as params['block3']['wq'].
#pragma once

#include <map>
#include <string>
#include <utility>

#include "graft/graft.h"

namespace graft::test {

using Layer = std::map<std::string, Array>;
using Params = std::map<std::string, Layer>;

// An MLP of `layers` tanh layers of width `width` on inputs of 8 features.
inline Params mlp_params(int layers, int width = 16) {
  Params p;
  for (int i = 0; i < layers; ++i) {
    const int64_t in = i == 0 ? 8 : width;
    p["layer" + std::to_string(i)] = {{"w", full({in, width}, 0.1f)}, {"b", zeros({width})}};
  }
  return p;
}

inline Array mlp_loss(const Params& p, const Array& x, const Array& y) {
  Array h = x;
  for (const auto& [name, layer] : p) {
    named_scope scope(name);
    h = graft::tanh(matmul(h, layer.at("w")) + layer.at("b"));
  }
  named_scope scope("loss");
  return mean(square(sum(h, {1}) - y));
}

// A pre-norm transformer: `blocks` blocks of single-head attention and a gelu
// MLP over a sequence of 8 tokens of width 16; the loss is a log-softmax
// cross-entropy against token targets.
inline Params transformer_params(int blocks, int d = 16) {
  Params p;
  for (int i = 0; i < blocks; ++i)
    p["block" + std::string(i < 10 ? "0" : "") + std::to_string(i)] = {
        {"wq", full({d, d}, 0.02f)}, {"wk", full({d, d}, 0.03f)},     {"wv", full({d, d}, 0.01f)},
        {"wo", full({d, d}, 0.02f)}, {"w1", full({d, 4 * d}, 0.02f)}, {"w2", full({4 * d, d}, 0.02f)}};
  p["head"] = {{"w", full({d, 10}, 0.05f)}};
  return p;
}

inline Array transformer_loss(const Params& p, const Array& x, const Array& targets) {
  Array h = x;
  for (const auto& [name, layer] : p) {
    if (name == "head") continue;
    named_scope block(name);
    {
      named_scope scope("attention");
      const Array n = nn::standardize(h);
      const Array q = matmul(n, layer.at("wq")), k = matmul(n, layer.at("wk")), v = matmul(n, layer.at("wv"));
      const Array a = softmax(matmul(q, transpose(k)) * 0.25f);
      h = h + matmul(matmul(a, v), layer.at("wo"));
    }
    named_scope scope("mlp");
    h = h + matmul(nn::gelu(matmul(nn::standardize(h), layer.at("w1"))), layer.at("w2"));
  }
  named_scope scope("loss");
  const Array logp = log_softmax(matmul(h, p.at("head").at("w")));
  return -mean(sum(logp * targets, {1}));
}

inline Graph transformer_grad_graph(int blocks) {
  const Array x = reshape(linspace(-1, 1, 8 * 16), {8, 16});
  const Array targets = one_hot(arange(8) % 10, 10);
  return make_graph(value_and_grad(transformer_loss))(transformer_params(blocks), x, targets);
}

// An Elman RNN over 12 steps: h' = tanh(h W + x_t U), loss the mean of the
// last state; its flops are about 12 * (2*16*16 + 2*4*16 + 2*16) plus the
// reduction.
inline Array rnn_loss(const Layer& p, const Array& xs) {
  auto step = [&](const Array& h, const Array& x) {
    const Array next = graft::tanh(matmul(h, p.at("w")) + matmul(x, p.at("u")));
    return std::make_pair(next, next);
  };
  auto [last, hs] = scan(step, zeros({16}), xs);
  return mean(last);
}

inline Graph rnn_graph() {
  const Layer p{{"w", full({16, 16}, 0.1f)}, {"u", full({4, 16}, 0.1f)}};
  return make_graph(rnn_loss)(p, reshape(linspace(-1, 1, 12 * 4), {12, 4}));
}

}  // namespace graft::test

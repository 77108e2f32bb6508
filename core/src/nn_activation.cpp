// Activations of the nn runtime (core/include/perfcard/nn.h), in place, element by element with the C++
// library's functions: one implementation for both paths (nn.h says why).
#include <cmath>
#include <string>

#include "perfcard/error.h"
#include "perfcard/nn.h"

namespace perfcard::nn {

void relu(std::span<float> x) {
  for (float& v : x) v = v < 0.0f ? 0.0f : v;  // NaN stays NaN
}

void gelu_tanh(std::span<float> x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  constexpr float kCubic = 0.044715f;
  for (float& v : x) v = 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * (v + kCubic * v * v * v)));
}

namespace {
// exp of a non-positive argument only: no overflow for either sign of x.
float sigmoid1(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
}
}  // namespace

void silu(std::span<float> x) {
  for (float& v : x) v *= sigmoid1(v);
}

void tanh(std::span<float> x) {
  for (float& v : x) v = std::tanh(v);
}

void sigmoid(std::span<float> x) {
  for (float& v : x) v = sigmoid1(v);
}

namespace {
struct NamedActivation {
  Activation a;
  const char* name;
};
constexpr NamedActivation kActivations[] = {
    {Activation::None, "none"}, {Activation::Relu, "relu"}, {Activation::GeluTanh, "gelu_tanh"},
    {Activation::Silu, "silu"}, {Activation::Tanh, "tanh"}, {Activation::Sigmoid, "sigmoid"},
};
}  // namespace

Activation activation_from_name(std::string_view name) {
  std::string known;
  for (const auto& k : kActivations) {
    if (name == k.name) return k.a;
    if (!known.empty()) known += ", ";
    known += k.name;
  }
  std::string message = "unknown activation '";
  message += name;
  message += "' (known: ";
  message += known;
  message += ')';
  throw data_error(message);
}

const char* activation_name(Activation a) {
  for (const auto& k : kActivations) {
    if (k.a == a) return k.name;
  }
  return "?";
}

void apply(Activation a, std::span<float> x) {
  switch (a) {
    case Activation::None: return;
    case Activation::Relu: return relu(x);
    case Activation::GeluTanh: return gelu_tanh(x);
    case Activation::Silu: return silu(x);
    case Activation::Tanh: return tanh(x);
    case Activation::Sigmoid: return sigmoid(x);
  }
}

}  // namespace perfcard::nn

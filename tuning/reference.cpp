#include "tuning/reference.hpp"

#include <cmath>
#include <vector>

namespace kjit {

void conv1d_reference(std::span<const double> x, std::span<const double> w,
                      std::span<const double> bias, std::span<const double> state_in,
                      std::span<double> y, std::span<double> state_out, int batch, int channels,
                      int steps, bool silu) {
    for (long long row = 0; row < static_cast<long long>(batch) * channels; ++row) {
        const int c = static_cast<int>(row % channels);
        const auto xx = [&](int t) {
            if (t >= 0)
                return x[row * steps + t];
            return state_in.empty() ? 0.0 : state_in[row * 3 + 3 + t];
        };
        for (int t = 0; t < steps; ++t) {
            double z = bias.empty() ? 0.0 : bias[c];
            for (int k = 0; k < 4; ++k)
                z += w[c * 4 + k] * xx(t - 3 + k);
            y[row * steps + t] = silu ? z / (1.0 + std::exp(-z)) : z;
        }
        for (int k = 0; k < 3; ++k)
            state_out[row * 3 + k] = xx(steps - 3 + k);
    }
}

void delta_rule_reference(std::span<const double> q, std::span<const double> k,
                          std::span<const double> v, std::span<const double> g,
                          std::span<const double> beta, std::span<double> state,
                          std::span<double> o, int heads, int dk, int dv, double scale) {
    for (int h = 0; h < heads; ++h) {
        double* s = state.data() + static_cast<long long>(h) * dk * dv;
        const double decay = std::exp(g[h]);
        for (int i = 0; i < dk * dv; ++i)
            s[i] *= decay;
        for (int j = 0; j < dv; ++j) {
            double sk = 0;
            for (int i = 0; i < dk; ++i)
                sk += s[i * dv + j] * k[h * dk + i];
            const double u = beta[h] * (v[h * dv + j] - sk);
            double out = 0;
            for (int i = 0; i < dk; ++i) {
                s[i * dv + j] += k[h * dk + i] * u;
                out += s[i * dv + j] * q[h * dk + i] * scale;
            }
            o[h * dv + j] = out;
        }
    }
}

} // namespace kjit

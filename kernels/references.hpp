#pragma once
// float64 references of kjit's own kernels: the yardstick of every tolerance check.

#include <span>

namespace kjit {

/// RMS normalization: y = x / sqrt(mean(x^2) + eps) * w, row by row.
void rms_norm_reference(std::span<const double> x, std::span<const double> w, std::span<double> y,
                        int rows, int n, double eps);

/// Causal depthwise conv1d of width 4 over x [B, C, T] with weights [C, 4], bias [C] (may be
/// empty), carry-in state [B, C, 3] (may be empty: zeros); writes y [B, C, T] and the
/// carry-out state [B, C, 3]. `silu` applies y = z / (1 + exp(-z)). `channel_last`: x and y
/// are [B, T, C] and the states [B, 3, C] instead.
void conv1d_reference(std::span<const double> x, std::span<const double> w,
                      std::span<const double> bias, std::span<const double> state_in,
                      std::span<double> y, std::span<double> state_out, int batch, int channels,
                      int steps, bool silu, bool channel_last = false);

/// One gated delta-rule decode step for B * H heads: S <- S exp(g); u = beta (v - S^T k);
/// S <- S + k u^T; o = S^T (q scale). q, k [BH, dk]; v, o [BH, dv]; g, beta [BH];
/// state [BH, dk, dv], updated in place.
void delta_rule_reference(std::span<const double> q, std::span<const double> k,
                          std::span<const double> v, std::span<const double> g,
                          std::span<const double> beta, std::span<double> state,
                          std::span<double> o, int heads, int dk, int dv, double scale);

} // namespace kjit

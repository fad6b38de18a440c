// Mamba2 (model_type "mamba2"): the measured cases of tests/data/estimator/pytorch-h200-kinds-f.* (one H200, no
// mamba-ssm / causal-conv1d kernels) against Mamba2Mixer.torch_forward read from modeling_mamba2.py (transformers
// 5.17; ssm_config.cpp, forward_ssm2.cpp). n_params exact (107,365,696: in_proj to inner + conv_dim + num_heads,
// conv1d over conv_dim = inner + 2 x n_groups x state_size, dt_bias / A_log / D per head, the gated norm, untied
// lm_head). Each bound is the measured error rounded up; without the mechanism both fail (the error before in the
// comment).
#include <gtest/gtest.h>

#include "kinds_records.hpp"

// Regression: Mamba2 read as a llama-style decoder: -77 % allocated in training, -92 % in inference. The chunked
// SSD's fp32 broadcast products (C x B^T of (batch, chunks, chunk, chunk, heads, state) before its sum, M x x,
// B_decay x x, C x states) and, in training, MulBackward0's two full-size input gradients of each at once.
TEST(EstimatorMamba2, ChunkedSsdWithoutKernels) {
  vramdoc::test::expect_cases_within("pytorch-h200-kinds-f",
                                     {{"002-mamba2-s-causal-lm-train-bf16", {2.0, 1.0}},
                                      {"003-mamba2-s-causal-lm-infer-bf16", {1.0, 1.0}}},
                                     /*exact_params=*/true);
}

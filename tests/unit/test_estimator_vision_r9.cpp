// Issue 28, round 9 (encoder-decoders, speech and vision): dev misses of rounds 5-8 (tests/data/estimator/
// pytorch-h200-kinds*.jsonl, one H200, a fresh process per case) against the mechanisms read from their modelling
// code (transformers 5.17). Each case within its bound: its measured error rounded up, parameter counts exact;
// without the mechanism each bound fails (the error before is in each test's comment).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kinds_records.hpp"

namespace {

void expect_within(const std::string& set, const std::map<std::string, vramdoc::test::CaseBound>& cases) {
  vramdoc::test::expect_cases_within(set, cases, /*exact_params=*/true);
}

}  // namespace

// Regression: CLIP's vision tower (clip_vision_model) read as a generic ViT stand-in: -14.6 / -13.4 % in training,
// -9.6 / -2.3 % in inference. modeling_clip.py's tower: quick_gelu (QuickGELUActivation: input * sigmoid(1.702 *
// input), the sigmoid saved, MulBackward0's two gradients at once), pre_layrnorm on the embeddings, post_layernorm on
// the class token alone (no final norm over the tokens), the patch Conv2d without bias, the classifier on the mean
// of the patch tokens.
TEST(EstimatorVisionRound9, ClipVisionTowerQuickGelu) {
  expect_within("pytorch-h200-kinds-e", {{"085-clip-vb32-image-cls-train-bf16", {0.009, 0.033}},
                                         {"086-clip-vb32-image-cls-infer-bf16", {0.001, 0.011}}});
}

// Regression: under autocast CrossEntropyLoss on 16-bit logits (Whisper's, T5's, BERT-style MLM heads') was read as
// all in 16 bit: whisper-s amp -15.8 / -13.8 %, whisper-tiny amp -11.6 / -9.3 %, whisper-b amp -2.5 / -13.1 %,
// megatron-bert MLM amp -6.4 / -13.0 %. cross_entropy_loss runs its decomposition with autocast on: log_softmax keeps
// 16 bit, nll_loss (autocast's fp32 list) saves an fp32 copy of the log-probabilities, whose fp32 gradient is cast
// back to 16 bit (the whisper-s amp trace: 106 + 212 + 212 MB at the backward's start).
TEST(EstimatorVisionRound9, AutocastCrossEntropyCastsLogProbsToFp32) {
  expect_within("pytorch-h200-kinds-b", {{"020-whisper-s-speech-seq2seq-train-amp_bf16", {0.028, 0.086}},
                                         {"059-whisper-b-speech-seq2seq-train-amp_bf16", {0.027, 0.032}}});
  expect_within("pytorch-h200-kinds-e", {{"078-whisper-tiny-speech-seq2seq-train-amp_bf16", {0.023, 0.014}},
                                         {"048-megatron-bert-mlm-train-amp_bf16", {0.001, 0.024}}});
}

// Regression: BART's relatives' activation_function was not read (every one a gelu): M2M100's relu (its output is
// fc2's input, the one tensor saved) +5.6 / +3.2 % in training, NLLB-MoE's relu +4.0 % allocated, BigBird-Pegasus'
// gelu_new (NewGELUActivation's pieces saved: trace 067-bigbird-pegasus, four per layer at activations.py) -10.5 /
// -10.6 %.
TEST(EstimatorVisionRound9, BartRelativesReadActivationFunction) {
  expect_within("pytorch-h200-kinds-c", {{"053-m2m-418m-seq2seq-train-bf16", {0.001, 0.002}}});
  expect_within("pytorch-h200-kinds-e", {{"073-nllb-moe-s-seq2seq-train-bf16", {0.02, 0.127}}});
  // BigBird-Pegasus' parameter count is 39,936 over transformers' (146,263,296 vs 146,223,360, before this round
  // too): not exact, not part of this change
  vramdoc::test::expect_cases_within("pytorch-h200-kinds-e", {{"067-bigbird-pegasus-seq2seq-train-bf16", {0.025, 0.027}}},
                                     /*exact_params=*/false);
}

// ProphetNet's predict_logits (a local of the forward) and its first stream's contiguous copy stay alive while
// _compute_loss transposes the logits and takes log_softmax in fp32 (trace 074-prophetnet): -15.6 / -12.7 % before.
// ProphetNetNgramSelfAttention (its int64 relative-position gather indices, the predict stream's fp32 softmax) is
// not modelled yet: the bound holds what is left.
TEST(EstimatorVisionRound9, ProphetNetLogitsHeldThroughTheLoss) {
  expect_within("pytorch-h200-kinds-e", {{"074-prophetnet-seq2seq-train-bf16", {0.149, 0.122}}});
}

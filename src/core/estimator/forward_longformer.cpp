// A forward op by op (see forward_ops.hpp): Longformer's sliding-chunk self-attention, as LED's encoder
// (modeling_led.py LEDEncoderSelfAttention, copied from modeling_longformer.py; transformers 5.17) runs it
// without global tokens, checked against round 3's led-b traces (docs/results/families-h200-2026-12-02/).
// Window w = attention_window / 2 on each side; the sequence in chunks of 2w overlapping by w.
#include <algorithm>
#include <vector>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

}  // namespace

// q /= sqrt(head_dim) in place; _sliding_chunks_query_key_matmul: q and k transposed to (batch x heads, seq,
// dim) copies, chunked (2 seq - 2w rows: einsum's contiguous copies, saved by its bmm), the chunks' 2w x 2w
// scores, padded by a row, copied into the (batch, heads, seq, 2w + 1) band; the padding mask's band (one
// head) through the same matmul, added in place; softmax(dtype=float32) of the band (its fp32 copy, a
// contiguous one, the probabilities: saved), masked_fill out of place, type_as back to 16 bit;
// _sliding_chunks_matmul_attn_probs_value: the probabilities reshaped (a copy), the values padded by w at
// each end (seq + 2w rows), the probabilities padded and diagonalised (3w + 1 columns: saved), the values'
// chunks of 3w contiguous (3 seq rows: saved), the output; transposed back and made contiguous.
//
// LongformerForSequenceClassification makes the first token global (global_attention_mask[:, 0] = 1): its key
// scores concatenated before the band (one column more: a band-sized copy), the probabilities' global column
// times its value (a (batch, heads, seq, dim) output, summed in), and _compute_global_attn_output_from_hidden's
// key_global and value_global of every token (saved by its bmm; the global query's scores are one row).
// In training attention_probs_dropout_prob drops the band's probabilities: its bool mask saved, the dropped
// copy in place of the 16-bit probabilities.
u64 sliding_chunks_attention(Forward& f, const LayerDims& d) {
  const ModelConfig& m = f.r.m;
  const bool global = m.kind == ModelKind::Encoder && f.r.o.task == Task::SeqCls;
  const double p = f.train ? m.attention_dropout : 0.0;
  // LEDEncoder._pad_to_window_size pads the sequence to a multiple of attention_window (2w): the band's length
  const u64 w = std::max<u64>(m.enc.attention_window / 2, 1), window = 2 * w;
  const u64 seq = saturating_mul((f.q_len + window - 1) / window, window);
  const u64 chunks = seq / w - 1, bh = mul(f.batch, d.heads), act = f.act;
  const auto rows = [&](u64 n, u64 width) { return mul(mul(bh, n), mul(d.head_dim, width)); };
  const u64 band = mul(mul(bh, seq), mul(2 * w + 1 + (global ? 1 : 0), act));
  std::vector<u64> chunked;
  for (int i = 0; i < 2; ++i) {  // query, then key
    const u64 flat = f.s.alloc(rows(seq, act));
    chunked.push_back(f.s.alloc(rows(mul(chunks, 2 * w), act)));
    f.keep(chunked.back());
    f.drop(flat);
  }
  const u64 square = mul(mul(bh, chunks), mul(mul(2 * w, 2 * w), act));
  const u64 raw = f.s.alloc(square), padded = f.s.alloc(saturating_add(square, mul(mul(bh, chunks), mul(2 * w, act))));
  f.drop(raw), f.drop(chunked);
  const u64 scores = f.s.alloc(band);  // diagonal_attention_scores
  f.drop(padded);
  const u64 mask = f.s.alloc(band / std::max<u64>(d.heads, 1));  // diagonal_mask (batch, seq, 1, 2w + 1)
  if (global) f.s.free(f.s.alloc(band));  // torch.cat((global_key_attn_scores, attn_scores), dim=-1)
  const u64 up = f.s.alloc(mul(band / act, 4)), contiguous = f.s.alloc(mul(band / act, 4));
  const u64 probs = f.s.alloc(mul(band / act, 4));
  f.keep(probs);
  f.drop(up), f.drop(contiguous);
  const u64 filled = f.s.alloc(mul(band / act, 4));
  f.drop(probs);
  u64 p16 = f.s.alloc(band);
  f.drop(filled), f.s.free(scores);
  if (p > 0.0) {  // nn.functional.dropout(attn_probs): the mask (saved), the dropped probabilities
    const u64 keep_mask = f.s.alloc(band / act);
    f.keep(keep_mask);
    const u64 dropped = f.s.alloc(band);
    f.drop(p16), p16 = dropped;
  }
  const u64 flat = f.s.alloc(band), values = f.s.alloc(rows(seq + 2 * w, act));
  const u64 diagonal = f.s.alloc(mul(mul(bh, seq), mul(3 * w + 1, act)));
  f.keep(diagonal);
  f.drop(flat), f.drop(p16);
  const u64 value_chunks = f.s.alloc(rows(mul(seq, 3), act));
  f.keep(value_chunks);
  u64 out = f.s.alloc(f.bytes(d.q, act));
  std::vector<u64> global_kv;
  f.drop(values), f.drop(diagonal), f.drop(value_chunks), f.s.free(mask);
  if (global) {  // attn_output_only_global + the sliding output; key_global, value_global of every token
    const u64 only_global = f.s.alloc(rows(seq, act)), sum = f.s.alloc(f.bytes(d.q, act));
    f.s.free(only_global), f.drop(out), out = sum;
    for (int i = 0; i < 2; ++i) global_kv.push_back(f.s.alloc(f.bytes(d.q, act))), f.keep(global_kv.back());
  }
  const u64 merged = f.s.alloc(f.bytes(d.q, act));
  f.drop(out), f.drop(global_kv);
  return merged;
}

}  // namespace vramdoc::estimator::detail

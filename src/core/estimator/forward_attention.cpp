// A forward op by op (see forward_ops.hpp): RoPE and the attention kernels, each allocation in the order transformers 5.17 and PyTorch 2.11 make it
// (checked against docs/results/estimator-families-h200-2026-11-30/raw.tar.xz (traces/)), and what autograd saves of each.
#include <algorithm>
#include <vector>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// The partial-rotary code path (rotate the first dims, then torch.cat with the rest), taken even at
// full rotation by Phi-3.
bool rope_with_cat(const ModelConfig& m, const LayerDims& d) {
  return d.rotary < d.head_dim || m.family == Family::Phi3 || m.family == Family::Phi || m.family == Family::GptNeox;
}

// ModernBERT's apply_rotary_pos_emb on one of q, k (`e` elements per token): (x.float() * cos) +
// (rotate_half(x.float()) * sin), each x.float() a temporary of its own freed at its product, rotate_half's
// -x2 (half) and cat; the fp32 sum is returned (nothing saved but cos and sin). ERNIE 4.5 (modeling_ernie4_5.py)
// rotates first: rotate_half(x).float(), its -x2 and cat in x's dtype, then the upcast.
u64 inline_fp32_rope(Forward& f, u64 e) {
  const u64 up = f.s.alloc(f.bytes(e, 4)), a = f.s.alloc(f.bytes(e, 4));
  f.drop(up);
  const bool rotate_first = f.r.m.family == Family::Ernie45;
  const u64 rw = rotate_first ? f.act : 4;
  const u64 up2 = rotate_first ? 0 : f.s.alloc(f.bytes(e, 4)), neg = f.s.alloc(f.bytes(e / 2, rw)), cat = f.s.alloc(f.bytes(e, rw));
  f.drop(up2), f.drop(neg);
  const u64 catf = rotate_first ? f.s.alloc(f.bytes(e, 4)) : cat;
  if (catf != cat) f.drop(cat);
  const u64 b = f.s.alloc(f.bytes(e, 4));
  f.drop(catf);
  const u64 sum = f.s.alloc(f.bytes(e, 4));
  f.drop(a), f.drop(b);
  return sum;
}

// Eager attention's scores (scaled, Gemma 2's soft-capping: tanh saves its output, the mask
// added) and softmax in fp32 (saved): returns the probabilities and, in `x`, the masked scores
// (the caller frees them). The matmul's operands `operands` are freed after the scores. The mask
// has the embeddings' dtype, so under autocast the sum is fp32 already; otherwise softmax upcasts.
u64 eager_probabilities(Forward& f, const LayerDims& d, std::vector<u64> operands, u64& x) {
  const u64 sc = f.s.alloc(f.scores(d.heads, f.act));
  f.drop(operands);
  x = f.s.alloc(f.scores(d.heads, f.act));
  f.drop(sc);
  const bool capped = f.r.m.attn_logit_softcap > 0;
  const int steps = capped ? 4 : 1;  // / cap, tanh, * cap; the mask
  const u64 masked = std::max(f.act, f.r.w.weight);
  for (int i = 0; i < steps; ++i) {
    const u64 next = f.s.alloc(f.scores(d.heads, i + 1 == steps ? masked : f.act));
    if (capped && i == 1) f.keep(next);
    f.drop(x);
    x = next;
  }
  const u64 up = masked != 4 ? f.s.alloc(f.scores(d.heads, 4)) : 0, sm = f.s.alloc(f.scores(d.heads, 4));
  f.keep(sm);
  f.drop(up);
  return sm;
}

// Eager attention (transformers' eager_attention_forward) on q and k of `qkw` bytes (fp32 after
// RoPE under autocast): repeated keys and values; under autocast q and k cast to 16 bit for the
// matmul (saved by it); the query copied for the batched matmul; the probabilities (above) cast
// to the query's dtype and kept to the layer's end as attn_weights (under autocast the fp32 ones,
// cast to 16 bit again for the value matmul, which saves that copy); attention dropout in training; the output made
// contiguous.
u64 eager(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v, u64 qkw, bool q_heads_major, u64& held) {
  const bool repeat = d.kv_heads < d.heads, cast = qkw != f.act;
  const u64 kr = repeat ? f.s.alloc(f.bytes(d.q, qkw)) : k, vr = repeat ? f.s.alloc(f.bytes(d.q, f.act)) : v;
  const u64 q16 = cast ? f.s.alloc(f.bytes(d.q, f.act)) : q, k16 = cast ? f.s.alloc(f.bytes(repeat ? d.q : d.kv, f.act)) : kr;
  const u64 qc = q_heads_major && !cast ? q : f.s.alloc(f.bytes(d.q, f.act));
  f.keep(qc), f.keep(k16);
  std::vector<u64> operands;
  for (u64 id : {qc, k16, q16}) {
    if (id != q && id != kr) operands.push_back(id);
  }
  u64 x = 0;
  const u64 sm = eager_probabilities(f, d, operands, x);
  held = qkw == 4 ? sm : f.s.alloc(f.scores(d.heads, f.act));
  if (f.train && f.r.m.attention_dropout > 0 && (qkw != 4 || f.act == 4)) {
    // nn.functional.dropout(attn_weights, p=dropout, training) (the module's attention_dropout in training): its mask
    // saved, its output the value matmul's saved operand and the returned attn_weights (the cast copy goes)
    const u64 mask = f.s.alloc(f.scores(d.heads, 1));
    f.keep(mask);
    const u64 dropped = f.s.alloc(f.scores(d.heads, f.act));
    if (held != sm) f.s.free(held);
    held = dropped;
  }
  const u64 p16 = qkw == 4 && f.act != 4 ? f.s.alloc(f.scores(d.heads, f.act)) : held;
  f.keep(held), f.keep(p16), f.keep(vr);
  f.drop(x);
  if (held != sm) f.drop(sm);
  const u64 out = f.s.alloc(f.bytes(d.q, f.act));
  if (p16 != held) f.drop(p16);
  const u64 contiguous = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(out);
  if (kr != k) f.drop(kr);
  if (vr != v) f.drop(vr);
  return contiguous;
}

// GPT-2's own eager attention (modeling_gpt2.py eager_attention_forward): scores, divided by the
// scale, masked with torch.where, softmax (saved; fp32 under autocast) and its copy in the values'
// dtype, attention dropout (its mask and output saved), the output made contiguous for c_proj.
// MPNet's (modeling_mpnet.py MPNetSelfAttention): the same without the where (the position bias is
// added in place), q saved too (`q`: 0 where it is a view of what k keeps).
u64 gpt2_eager(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v) {
  f.keep(q), f.keep(k), f.keep(v);
  const u64 sw = f.amp ? 4 : f.act;
  u64 x = f.s.alloc(f.scores(d.heads, f.act));
  if (f.r.m.family == Family::OpenaiGpt) {  // Attention._attn: w = w / sqrt(d); w = w * b + -1e4 * (1 - b) (its causal
    // `bias` buffer sliced; the (1 - b) terms are seq x seq, small): w, w * b and the sum live at once; generate()'s
    // attention mask (batch x 1 x 1 x seq) added, w + mask (modeling_openai.py)
    const u64 scaled = f.s.alloc(f.scores(d.heads, f.act));
    f.drop(x);
    const u64 prod = f.s.alloc(f.scores(d.heads, f.act)), sum = f.s.alloc(f.scores(d.heads, f.act));
    f.drop(prod), f.drop(scaled);
    x = sum;
    if (!f.train && f.r.o.new_tokens > 0) {
      const u64 masked = f.s.alloc(f.scores(d.heads, f.act));
      f.drop(x);
      x = masked;
    }
  }
  const int steps = f.r.m.family == Family::Gpt2 ? 2 : f.r.m.family == Family::OpenaiGpt ? 0 : 1;
  for (int i = 0; i < steps; ++i) {  // GPT-2: / scale, torch.where(causal, ...); MPNet: / scale
    const u64 next = f.s.alloc(f.scores(d.heads, f.act));
    f.drop(x);
    x = next;
  }
  const u64 sm = f.s.alloc(f.scores(d.heads, sw));
  f.keep(sm);
  f.drop(x);
  u64 probs = sw != f.act ? f.s.alloc(f.scores(d.heads, f.act)) : sm;
  if (f.train && f.r.m.attention_dropout > 0) {
    const u64 mask = f.s.alloc(f.scores(d.heads, 1)), dropped = f.s.alloc(f.scores(d.heads, f.act));
    f.keep(mask);
    if (probs != sm) f.drop(probs);
    probs = dropped;
  }
  f.keep(probs);
  const u64 out = f.s.alloc(f.bytes(d.q, f.act)), contiguous = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(out), f.drop(probs), f.drop(sm);
  return contiguous;
}

// SDPA's math kernel (aten _scaled_dot_product_attention_math): 16-bit inputs upcast to fp32, the
// query and keys scaled, keys expanded to every head, the query reshaped for the batched matmul,
// fp32 scores and probabilities (saved with the matmuls' operands), a bool mask of rows
// (_safe_softmax), the probabilities' 16-bit copy (returned), the output cast back. The query's own
// copy first was measured (Falcon 7B) and is kept as measured.
u64 math_kernel(Forward& f, const LayerDims& d) {
  const bool up = f.act != 4, expand = d.kv_heads < d.heads;
  const u64 qx = f.s.alloc(f.bytes(d.q, f.act));
  const u64 qf = up ? f.s.alloc(f.bytes(d.q, 4)) : 0, kf = up ? f.s.alloc(f.bytes(d.kv, 4)) : 0;
  const u64 vf = up ? f.s.alloc(f.bytes(d.kv, 4)) : 0;
  const u64 qs = f.s.alloc(f.bytes(d.q, 4)), ks = f.s.alloc(f.bytes(d.kv, 4));
  const u64 kx = expand ? f.s.alloc(f.bytes(d.q, 4)) : ks, qr = f.s.alloc(f.bytes(d.q, 4));
  f.keep(qr), f.keep(kx);
  const u64 sc = f.s.alloc(f.scores(d.heads, 4));
  f.drop(qr), f.drop(kx), f.drop(ks);
  const u64 pr = f.s.alloc(f.scores(d.heads, 4)), rows = f.s.alloc(f.scores(d.heads, 1));
  f.keep(pr);
  f.drop(rows), f.drop(sc);
  const u64 p16 = up ? f.s.alloc(f.scores(d.heads, f.act)) : 0;
  const u64 vx = expand ? f.s.alloc(f.bytes(d.q, 4)) : vf, o32 = f.s.alloc(f.bytes(d.q, 4));
  f.keep(vx);
  if (vx != vf) f.drop(vx);
  const u64 out = up ? f.s.alloc(f.bytes(d.q, f.act)) : o32;
  if (up) f.drop(o32);
  for (u64 id : {pr, qs, vf, kf, qf, p16, qx}) f.drop(id);
  return out;
}

// Projections: q, k and v (own Linears, or views of one fused Linear's output, which Falcon copies:
// its single key/value head by index, and for the new architecture every head broadcast).
struct Qkv {
  u64 q = 0, k = 0, v = 0;  // tensors of their own (0: a view of `fused`)
  u64 fused = 0;
  std::vector<u64> end;     // dropped when attention returns
};

// The q/k norm of Qwen 3 and OLMo 2 (right after each projection) or Gemma 3 (after all three).
u64 qk_normed(Forward& f, u64 raw, u64 elements) {
  const u64 n = norm(f, raw, elements, f.act);
  f.drop(raw);
  return n;
}

Qkv projections(Forward& f, const LayerDims& d, u64 x, bool input_wide) {
  const ModelConfig& m = f.r.m;
  Qkv t;
  if (!m.fused_qkv && !gpt2_style(m.family)) {
    // (Llama 4 normalises after RoPE, in its RoPE layers only: attention())
    const bool norm_each = m.qk_norm != QkNorm::None && m.family != Family::Gemma3 && m.family != Family::Llama4;
    const auto names = projection_names(m.family);
    t.q = linear(f, x, d.h, d.q, input_wide, std::string(names[0]));
    if (m.scaled_query) {  // OPT: q_proj(hidden_states) * self.scaling
      const u64 scaled = f.s.alloc(f.bytes(d.q, f.act));
      f.drop(t.q), t.q = scaled;
    }
    if (norm_each) t.q = qk_normed(f, t.q, d.q);
    t.k = linear(f, x, d.h, d.kv, input_wide, std::string(names[1]));
    if (norm_each) t.k = qk_normed(f, t.k, d.kv);
    t.v = linear(f, x, d.h, d.kv, input_wide, std::string(names[2]));
    if (m.qk_norm != QkNorm::None && m.family == Family::Gemma3) t.q = qk_normed(f, t.q, d.q), t.k = qk_normed(f, t.k, d.kv);
    return t;
  }
  const u64 tp = std::max<u64>(f.r.o.tensor_parallel, 1);
  const u64 kv_fused = m.kv_broadcast_to_heads ? mul(m.num_kv_heads / tp, d.head_dim) : d.kv;
  const char* name = m.family == Family::Phi3 || m.family == Family::Codegen ? "qkv_proj" : m.family == Family::Mpt ? "Wqkv" : gpt2_style(m.family) ? "c_attn" : "query_key_value";
  t.fused = linear(f, x, d.h, d.q + 2 * kv_fused, input_wide, name);
  if (m.clip_qkv > 0) {  // DBRX: qkv_states.clamp(-clip_qkv, clip_qkv), a tensor of its own (clamp saves its input)
    f.keep(t.fused);
    const u64 clamped = f.s.alloc(f.bytes(d.q + 2 * kv_fused, f.act));
    f.drop(t.fused), t.fused = clamped;
  }
  if (m.family != Family::Falcon) return t;
  if (m.kv_broadcast_to_heads) {
    const u64 ki = f.s.alloc(f.bytes(kv_fused, f.act)), vi = f.s.alloc(f.bytes(kv_fused, f.act));
    t.q = f.s.alloc(f.bytes(d.q, f.act)), t.k = f.s.alloc(f.bytes(d.q, f.act)), t.v = f.s.alloc(f.bytes(d.q, f.act));
    f.drop(ki), f.drop(vi);
  } else if (d.kv_heads < d.heads) {
    t.k = f.s.alloc(f.bytes(d.kv, f.act)), t.v = f.s.alloc(f.bytes(d.kv, f.act));
  }
  return t;
}

// Whisper's attention (modeling_whisper.py:310, 334, 335): (q_proj(x) * scaling), k_proj(x) and v_proj(x), each
// .view().transpose(1, 2).contiguous(): [batch, heads, seq, dim] copies (SDPA saves them; the projections'
// outputs and the scaled query are freed), so SDPA's output is heads-major and sdpa_attention_forward's
// transpose(1, 2).contiguous() copies it (the caller: heads_major).
void heads_major_copies(Forward& f, const LayerDims& d, Qkv& t) {
  const u64 scaled = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(t.q);
  t.q = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(scaled);
  for (u64* x : {&t.k, &t.v}) {
    const u64 copy = f.s.alloc(f.bytes(d.kv, f.act));
    f.drop(*x);
    *x = copy;
  }
}

// RoPE on q and k: the rotated query and key, and whether the query's memory is [batch, heads,
// seq, dim] (made by a cat), which SDPA's output inherits.
struct Rotated {
  u64 q = 0, k = 0;
  bool heads_major = false;
};

Rotated apply_rope(Forward& f, const LayerDims& d, Qkv& t) {
  const ModelConfig& m = f.r.m;
  // OLMo 2's cos is fp32; CodeGen's sincos buffer is never cast (embed_positions[position_ids]: fp32 products, cats)
  const u64 cos_width = m.family == Family::Olmo2 || m.family == Family::Codegen ? 4 : f.wide, pw = std::max(f.act, cos_width);
  Rotated out;
  if (m.rope_fp32 && f.act != 4 && m.enc.rope_upcast_inline) {
    const u64 qr = inline_fp32_rope(f, mul(d.heads, d.rotary)), kr = inline_fp32_rope(f, mul(d.kv_heads, d.rotary));
    out.q = f.s.alloc(f.bytes(d.q, f.act)), out.k = f.s.alloc(f.bytes(d.kv, f.act));
    for (u64 id : {qr, kr, t.q, t.k}) f.drop(id);
    return out;
  }
  if (m.rope_fp32 && f.act != 4) {  // Cohere: q.float(), k.float(), rotated in fp32, cast back at the return
    const u64 qf = f.s.alloc(f.bytes(d.q, 4)), kf = f.s.alloc(f.bytes(d.kv, 4));
    const u64 qr = rope(f, mul(d.heads, d.rotary), 4, 4), kr = rope(f, mul(d.kv_heads, d.rotary), 4, 4);
    out.q = f.s.alloc(f.bytes(d.q, f.act)), out.k = f.s.alloc(f.bytes(d.kv, f.act));
    for (u64 id : {qf, kf, qr, kr, t.q, t.k}) f.drop(id);
    return out;
  }
  if (!rope_with_cat(m, d)) {
    out.q = rope(f, mul(d.heads, d.rotary), f.act, pw), out.k = rope(f, mul(d.kv_heads, d.rotary), f.act, pw);
    f.drop(t.q), f.drop(t.k);
    if (m.family == Family::Olmo2 && pw != f.act) {  // q_embed.to(q_type), k_embed.to(k_type)
      const u64 qc = f.s.alloc(f.bytes(d.q, f.act)), kc = f.s.alloc(f.bytes(d.kv, f.act));
      f.drop(out.q), f.drop(out.k);
      out.q = qc, out.k = kc;
    }
    return out;
  }
  out.heads_major = true;
  const u64 qe = mul(d.heads, d.rotary), ke = mul(d.kv_heads, d.rotary);
  if (m.family == Family::Phi3) {  // q rotated and concatenated, then k
    const u64 qr = rope(f, qe, f.act, pw);
    out.q = f.s.alloc(f.bytes(d.q, pw));
    f.drop(qr);
    const u64 kr = rope(f, ke, f.act, pw);
    out.k = f.s.alloc(f.bytes(d.kv, pw));
    f.drop(kr);
    return out;
  }
  const u64 qr = rope(f, qe, f.act, pw), kr = rope(f, ke, f.act, pw);
  out.q = f.s.alloc(f.bytes(d.q, pw));
  // Phi's and GPT-J's attention hold query_rot, key_rot and (through the pass-through views) q, k to its end
  const bool phi = m.family == Family::Phi || gptj_style(m.family);
  if (phi) t.end.push_back(qr); else f.drop(qr);
  out.k = f.s.alloc(f.bytes(d.kv, pw));
  if (phi) t.end.insert(t.end.end(), {kr, t.q, t.k}); else f.drop(kr), f.drop(t.q), f.drop(t.k);
  return out;
}

// DeBERTa-v2's DisentangledSelfAttention (eager; share_att_key, c2p and p2c), as the deberta-s traces
// of docs/results/families-h200-2026-12-01-b/ (021 training, 022 inference) show it: key^T / scale
// (saved by the bmm) and the content scores; the relative embeddings through the shared projections,
// repeated over the batch (saved); c2p = bmm(q, pos_key^T) over R = 2 x position_buckets columns
// (saved), its int64 index of seq x seq, the gathered scores, / scale into rel_att (held to the
// attention's end); p2c the same over the keys, added to rel_att; scores + rel_att; the mask and
// masked_fill (its bool mask saved); softmax (saved; fp32 under autocast), attention dropout (mask
// and output saved), the probabilities' 16-bit copy under autocast; bmm with v (saved) and the
// context made contiguous, which is returned.
// v1 (modeling_deberta.py DisentangledSelfAttention.forward): one in_proj, whose key view the scores' matmul
// saves (holding the fused output: q, k and v here); query + q_bias, that / scale (saved), value + v_bias (saved).
// Its terms, tables and projections only with relative_attention, each term only where pos_att_type names it.
u64 deberta_attention(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v) {
  const EncoderParts& e = f.r.m.enc;
  const u64 score_w = f.act, kv_len = f.kv_len, square = mul(f.q_len, kv_len);
  u64 ks = 0;  // v2: key^T / scale; v1: the scaled query
  if (e.fused_in_proj) {
    const u64 biased = f.s.alloc(f.bytes(d.q, f.act));
    ks = f.s.alloc(f.bytes(d.q, f.act));
    f.s.free(biased);
    f.keep(ks), f.keep(k), f.keep(q), f.keep(v);  // (q, v: the rest of in_proj's output)
    v = f.s.alloc(f.bytes(d.kv, f.act));
  } else {
    ks = f.s.alloc(f.bytes(d.kv, f.act));
    f.keep(q), f.keep(ks);
  }
  const u64 scores = f.s.alloc(f.scores(d.heads, score_w));
  f.drop(ks);
  const u64 rel_rows = mul(f.batch, std::max<u64>(e.relative_buckets, 1));
  // the relative embeddings' projections: both with v2's share_att_key, else one per term pos_att_type names
  const bool rel = e.relative_attention, both = !e.position_projections;
  const u64 pos_q = rel && (both || e.p2c) ? f.s.alloc(mul(rel_rows, mul(d.q, f.act))) : 0;
  const u64 pos_k = rel && (both || e.c2p) ? f.s.alloc(mul(rel_rows, mul(d.kv, f.act))) : 0;
  f.keep(pos_q), f.keep(pos_k);
  std::vector<u64> held;  // to the attention's end
  u64 gathered[2] = {0, 0};
  u64 score = 0;  // disentangled_att_bias' `score`: 0, then the first term's sum (a new tensor), the second's in place
  const bool terms[2] = {rel && e.c2p, rel && e.p2c};
  for (int i = 0; i < 2; ++i) {  // c2p, then p2c
    if (!terms[i]) continue;
    f.kv_len = std::max<u64>(e.relative_buckets, 1);
    const u64 raw = f.s.alloc(f.scores(d.heads, score_w));
    f.kv_len = kv_len;
    f.keep(raw);
    const u64 first = f.s.alloc(mul(square, 8)), index = f.s.alloc(mul(square, 8));
    f.s.free(first);
    f.keep(index), held.push_back(index);
    gathered[i] = f.s.alloc(f.scores(d.heads, score_w));
    f.drop(raw);
    const u64 scaled = f.s.alloc(f.scores(d.heads, score_w));
    if (score == 0) score = f.s.alloc(f.scores(d.heads, score_w));  // rel_att
    f.s.free(scaled);
  }
  f.s.free(gathered[0]), f.s.free(gathered[1]);  // (0: a term that did not run; freeing id 0 does nothing)
  if (!f.train) f.drop(pos_q), f.drop(pos_k);
  // `attention_scores + rel_att`: a new tensor wherever the bias ran (even as the int 0) and in v1 always
  const u64 sum = rel || e.scores_plus_zero ? f.s.alloc(f.scores(d.heads, score_w)) : scores;
  if (sum != scores) f.drop(scores);
  const u64 mask_rows = mul(f.batch, square);  // (batch, 1, seq, seq) bool
  held.push_back(f.s.alloc(mask_rows));
  const u64 mask = f.s.alloc(mask_rows);
  f.keep(mask);
  const u64 masked = f.s.alloc(f.scores(d.heads, score_w));
  f.drop(mask);
  if (sum != scores) f.s.free(sum); else f.drop(scores);
  const u64 probs = f.s.alloc(f.scores(d.heads, f.amp ? 4 : f.act));
  f.keep(probs);
  u64 dropped = probs, drop_mask = 0;
  if (f.train && f.r.m.attention_dropout > 0) {
    drop_mask = f.s.alloc(f.scores(d.heads, 1));
    dropped = f.s.alloc(f.scores(d.heads, f.amp ? 4 : f.act));
    f.keep(drop_mask), f.keep(dropped);
  }
  const u64 p16 = f.amp ? f.s.alloc(f.scores(d.heads, 2)) : dropped;
  f.keep(p16), f.keep(v);
  const u64 context = f.s.alloc(f.bytes(d.q, f.act)), out = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(context);
  if (p16 != dropped) f.drop(p16);
  f.s.free(score), f.drop(masked), f.drop(probs);
  if (dropped != probs) f.drop(dropped), f.drop(drop_mask);
  for (u64 id : held) f.drop(id);
  if (f.train) f.drop(pos_q), f.drop(pos_k);
  if (e.fused_in_proj) f.drop(v);  // value + v_bias
  return out;
}

// LayoutLMv3SelfAttention.forward (modeling_layoutlmv3.py): q / sqrt(d) (saved by the matmul with k), the scores;
// (rel_pos + rel_2d_pos) / sqrt(d) added in place (two transients); + the additive mask (a new tensor);
// cogview_attention: scores / 32 (saved by amax's backward), minus the row max, times 32, softmax (saved); attention
// dropout (its mask and output saved); the context made contiguous.
u64 cogview_attention(Forward& f, const LayerDims& d, u64 k, u64 v) {
  const EncoderParts& e = f.r.m.enc;
  const u64 qs = f.s.alloc(f.bytes(d.q, f.act));
  f.keep(qs), f.keep(k), f.keep(v);
  const u64 scores = f.s.alloc(f.scores(d.heads, f.act));
  f.drop(qs);
  const int biases = (e.rel_1d_bins > 0 ? 1 : 0) + (e.rel_2d_bins > 0 ? 1 : 0);
  if (biases > 0) {
    const u64 sum = biases == 2 ? f.s.alloc(f.scores(d.heads, f.act)) : 0, scaled = f.s.alloc(f.scores(d.heads, f.act));
    if (sum != 0) f.s.free(sum);
    f.s.free(scaled);
  }
  const u64 masked = f.s.alloc(f.scores(d.heads, f.act));
  f.s.free(scores);
  const u64 divided = f.s.alloc(f.scores(d.heads, f.act));
  f.keep(divided);
  f.drop(masked);
  const u64 centred = f.s.alloc(f.scores(d.heads, f.act)), stretched = f.s.alloc(f.scores(d.heads, f.act));
  f.s.free(centred);
  const u64 sm = f.s.alloc(f.scores(d.heads, f.act));
  f.keep(sm);
  f.s.free(stretched), f.drop(divided);
  u64 probs = sm;
  if (f.train && f.r.m.attention_dropout > 0) {
    const u64 mask = f.s.alloc(f.scores(d.heads, 1));
    probs = f.s.alloc(f.scores(d.heads, f.act));
    f.keep(mask), f.keep(probs);
  }
  const u64 out = f.s.alloc(f.bytes(d.q, f.act)), contiguous = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(out), f.drop(probs), f.drop(sm);
  return contiguous;
}

// SDPA's fused kernels (flash / memory-efficient): the output, saved with q, k, v; a bool mask made
// additive per call (saved in training); under autocast q, k, v cast to 16 bit first.
u64 fused_kernel(Forward& f, const LayerDims& d, LayerKind kind, u64 q, u64 k, u64 v) {
  std::vector<u64> casts;
  if (f.amp) casts = {f.s.alloc(f.bytes(d.q, 2)), f.s.alloc(f.bytes(d.kv, 2)), f.s.alloc(f.bytes(d.kv, 2))};
  for (u64 id : casts.empty() ? std::vector<u64>{q, k, v} : casts) f.keep(id);
  const u64 mask = kind.sliding && f.sliding_bool_mask != 0 ? f.s.alloc(f.scores(1, f.act)) : 0;
  f.keep(mask);
  const u64 out = f.s.alloc(f.bytes(d.q, f.act));
  f.keep(out);
  f.drop(mask), f.drop(casts);
  return out;
}

}  // namespace

u64 rope(Forward& f, u64 e, u64 xw, u64 pw) {
  const u64 a = f.s.alloc(f.bytes(e, pw)), neg = f.s.alloc(f.bytes(e / 2, xw)), cat = f.s.alloc(f.bytes(e, xw));
  f.drop(neg);
  const u64 b = f.s.alloc(f.bytes(e, pw));
  f.drop(cat);
  const u64 sum = f.s.alloc(f.bytes(e, pw));
  f.drop(a), f.drop(b);
  return sum;
}

LayerDims layer_dims(const Run& r) {
  const ModelConfig& m = r.m;
  const u64 tp = std::max<u64>(r.o.tensor_parallel, 1);
  LayerDims d{};
  d.h = m.hidden_size, d.head_dim = m.head_dim;
  d.heads = std::max<u64>(m.num_heads / tp, 1);
  d.kv_heads = m.kv_broadcast_to_heads ? d.heads : std::max<u64>(m.num_kv_heads / tp, 1);
  d.q = mul(d.heads, d.head_dim), d.kv = mul(d.kv_heads, d.head_dim);
  d.inter = m.intermediate_size / tp;
  d.rotary = std::min(m.rotary_dims, m.head_dim);
  return d;
}

// Llama4TextAttention.forward (modeling_llama4.py): after RoPE, Llama4TextL2Norm on q and k in the RoPE layers (an
// fp32 norm without weight, as the per-head RMSNorm's tensors); in the NoPE layers with attn_temperature_tuning,
// (query * attn_scales).to(dtype): the fp32 product (the scales are fp32), then its cast back.
void llama4_query_key(Forward& f, const LayerDims& d, LayerKind kind, Qkv& t, Rotated& rot) {
  const ModelConfig& m = f.r.m;
  if (!kind.nope && d.rotary > 0 && m.qk_norm != QkNorm::None) {
    const u64 q = qk_normed(f, rot.q, d.q);
    if (rot.q == t.q) t.q = 0;
    rot.q = q;
    const u64 k = qk_normed(f, rot.k, d.kv);
    if (rot.k == t.k) t.k = 0;
    rot.k = k;
  } else if (kind.nope && m.nope_temperature) {
    const u64 wide = f.s.alloc(f.bytes(d.q, 4)), q = f.act != 4 ? f.s.alloc(f.bytes(d.q, f.act)) : wide;
    if (q != wide) f.drop(wide);
    f.drop(rot.q);  // the projection's query (its only name is replaced; the product saves only the scales)
    rot.q = q;
  }
}

u64 attention(Forward& f, LayerKind kind, u64 input, bool input_wide, CacheIds& cache, u64& held) {
  const ModelConfig& m = f.r.m;
  if (m.mla.kv_lora_rank > 0) return latent_attention(f, input, cache);
  if (m.attention_experts > 0) return moa_attention(f, kind, input, cache);  // JetMoE (forward_jetmoe.cpp)
  const LayerDims d = layer_dims(f.r);
  Qkv t = projections(f, d, input, input_wide);
  Rotated rot{t.q, t.k, false};
  if (m.family == Family::Gptj && d.rotary > 0) gptj_sincos(f, d.rotary, t.end);
  if (m.family == Family::Whisper) heads_major_copies(f, d, t), rot = {t.q, t.k, true};
  if (d.rotary > 0 && !kind.nope) rot = apply_rope(f, d, t);
  if (m.family == Family::Llama4) llama4_query_key(f, d, kind, t, rot);
  u64 k = rot.k != 0 ? rot.k : t.fused, v = t.v != 0 ? t.v : t.fused;  // a view keeps the fused buffer
  const bool cached = f.use_cache || m.enc.always_cached;  // (XLM's encoder: the cache its model always makes)
  const u64 kv_len = f.kv_len;
  if (cached && m.attention_cache_window > 0) {  // RecurrentGemma: its own window-sized cache, the keys SDPA reads
    window_cache(f, d, cache);
    if (rot.k != t.k) f.drop(rot.k);
    f.drop(t.k), f.drop(t.v);
    k = cache[0], v = cache[1];
    f.kv_len = m.attention_cache_window;
  } else if (cached) {  // DynamicCache's first update concatenates onto an empty tensor: copies
    const bool fp32_keys = f.amp && d.rotary > 0 && !kind.nope && !m.rope_fp32;  // RoPE under autocast: fp32 keys
    const u64 kw = f.r.o.kv_bytes_per_element.value_or(fp32_keys ? 4 : f.act), vw = f.r.o.kv_bytes_per_element.value_or(f.act);
    cache[0] = f.s.alloc(f.bytes(d.kv, kw), Use::Cache), cache[1] = f.s.alloc(f.bytes(d.kv, vw), Use::Cache);
    if (rot.k != t.k) f.drop(rot.k);
    if (std::find(t.end.begin(), t.end.end(), t.k) == t.end.end()) f.drop(t.k);  // (a pass-through view holds it)
    f.drop(t.v);
    k = cache[0], v = cache[1];
  }
  const u64 q = rot.q != 0 ? rot.q : t.fused;
  u64 out = 0;
  const AttentionPath path = attention_path(m, f.r.o, kind);
  if (m.enc.attention_window > 0 && !kind.cross && m.kind != ModelKind::Decoder) {
    out = sliding_chunks_attention(f, d);
  } else if (m.enc.local_block > 0 && !kind.cross && m.kind == ModelKind::EncoderDecoder) {
    out = global_local_attention(f, d, kind.shifted, {t.q, t.k, t.v}, held);
  } else if (m.enc.sparse_block > 0 && !kind.cross && (m.kind == ModelKind::Encoder || f.memory == 0) &&  // BigBird-Pegasus' encoder
             f.q_len > saturating_mul(5 + 2 * m.enc.random_blocks, m.enc.sparse_block)) {  // else original_full
    out = block_sparse_attention(f, d, q, k, v, held);
  } else if (m.enc.cogview_attention) {  // LayoutLMv3's own eager attention
    out = cogview_attention(f, d, k, v);
  } else if (m.family == Family::DebertaV2) {  // always its own eager attention
    out = deberta_attention(f, d, q, t.k, v);  // (v2's k: the scores' key^T / scale is its own copy)
  } else if ((path == AttentionPath::Eager && m.family == Family::Gpt2) || m.family == Family::OpenaiGpt) {
    out = gpt2_eager(f, d, 0, k, v);
  } else if (m.enc.segment_means > 0) {  // Nystromformer's own attention
    out = nystrom_attention(f, d, v);
  } else if (m.enc.batched_position_bias || m.enc.own_eager_attention ||  // MPNet's, RoFormer's own eager attention;
             (m.enc.eager_by_default && !m.enc.interface_eager && path == AttentionPath::Eager)) {  // a stand-in's (its class has no SDPA: hand-written)
    out = gpt2_eager(f, d, q, k, v);
  } else if (m.alibi) {
    out = bloom_attention(f, d, k, v, f.use_cache, held, f.after_residual);
  } else if (m.family == Family::Mpt) {
    out = mpt_attention(f, d, q, k, v, held);
  } else if (m.family == Family::Xglm) {  // always its own eager attention
    out = xglm_attention(f, d, q, k, v, held);
    t.q = 0;  // freed there: its reshape's copy took its place
  } else if (m.fp32_attention) {
    out = fp32_attention(f, d, q, k, v, held);
  } else if (m.attention_sinks) {
    out = sink_attention(f, d, q, k, v, rot.heads_major, held);
  } else if (path == AttentionPath::Eager) {
    const u64 qkw = d.rotary > 0 && m.family != Family::Olmo2 ? std::max(f.act, f.wide) : f.act;  // fp32 RoPE under autocast
    out = eager(f, d, q, k, v, qkw, rot.heads_major, held);
  } else {
    const bool math = path == AttentionPath::Math;
    const u64 raw = math ? math_kernel(f, d) : fused_kernel(f, d, kind, q, k, v);
    out = raw;
    if (math || rot.heads_major) {  // transpose(1, 2).contiguous() of a [batch, heads, seq, dim] output
      out = f.s.alloc(f.bytes(d.q, f.act));
      f.drop(raw);
    }
  }
  f.kv_len = kv_len;
  if (m.sub_norms) {  // BitNetAttention: o_proj(attn_sub_norm(attn_output)) (modular_bitnet.py)
    const u64 n = norm(f, out, d.q, f.act);
    f.drop(out);
    out = n;
  }
  // BertSelfAttention and its copies end before BertSelfOutput's dense: q, k and v (their locals) go first, and
  // BertAttention holds the attention's output (self_outputs) through the dense, its dropout, the sum and the norm
  // (the XLM-R inference trace of 2026-12-03). Not ALBERT's or MPNet's attention (one module with its output
  // projection) nor DistilBERT's (out_lin in MultiHeadSelfAttention).
  const bool self_output = f.r.o.mode == Mode::Infer && m.kind == ModelKind::Encoder && m.post_norm && m.family != Family::DistilBert &&
                           !m.enc.project_in_encoder && !m.enc.batched_position_bias && !kind.cross && !m.alibi;
  const auto release_projections = [&] {  // q, k and v (their rotated copies; a cache keeps its keys and values)
    if (rot.q != t.q) f.drop(rot.q);
    if (!cached) f.drop(rot.k), f.drop(t.k), f.drop(t.v);
    f.drop(t.q), f.drop(t.fused), f.drop(t.end);
  };
  if (self_output) release_projections();
  const u64 o = linear(f, out, d.q, d.h, false, gpt2_style(m.family) ? "attn.c_proj" : std::string(attention_output_name(m.family)));
  if (self_output) {
    f.self_output = out;
    return o;
  }
  if (m.alibi) {  // BLOOM: the fused projection, the locals and the merged heads go after the residual sum
    f.after_residual.insert(f.after_residual.begin(), t.fused);
    f.after_residual.push_back(out);
    return o;
  }
  f.drop(out);
  release_projections();
  return o;
}

}  // namespace vramdoc::estimator::detail

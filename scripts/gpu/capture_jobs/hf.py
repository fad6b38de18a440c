"""A transformers model built from its config (no download): BERT, RoBERTa or DistilBERT classification
or masked LM (RoBERTa-large's shape too), T5, BART, Whisper, or a Llama- or Qwen2-style decoder (with
grouped or full key/value heads) with PEFT LoRA adapters, trained on random tokens."""
import torch
import transformers as tr

import jobcommon

p = jobcommon.parser(__doc__)
p.add_argument("--model", default="bert-cls",
               choices=["bert-cls", "bert-mlm", "bert-large-cls", "roberta-cls", "roberta-large-mlm", "distilbert-mlm", "t5",
                        "t5-small", "bart", "whisper", "llama-lora", "llama", "llama-mha-lora", "qwen2-lora",
                        "qwen2-0.5b-lora"])
p.add_argument("--seq", type=int, default=256)
a = p.parse_args()
V = 30522
if a.model.startswith("bert"):
    large = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    cfg = tr.BertConfig(**(large if "large" in a.model else {}))
    model = (tr.BertForMaskedLM if a.model == "bert-mlm" else tr.BertForSequenceClassification)(cfg)

    def inputs():
        ids = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device="cuda")
        labels = ids if a.model == "bert-mlm" else torch.randint(0, 2, (a.batch,), device="cuda")
        return dict(input_ids=ids, attention_mask=torch.ones_like(ids), labels=labels)
elif a.model == "roberta-cls":
    cfg = tr.RobertaConfig(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1)
    model = tr.RobertaForSequenceClassification(cfg)

    def inputs():
        ids = torch.randint(3, cfg.vocab_size, (a.batch, a.seq), device="cuda")
        return dict(input_ids=ids, attention_mask=torch.ones_like(ids), labels=torch.randint(0, 2, (a.batch,), device="cuda"))
elif a.model == "roberta-large-mlm":  # RoBERTa-large's shape
    cfg = tr.RobertaConfig(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1,
                           hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    model = tr.RobertaForMaskedLM(cfg)

    def inputs():
        ids = torch.randint(3, cfg.vocab_size, (a.batch, a.seq), device="cuda")
        return dict(input_ids=ids, attention_mask=torch.ones_like(ids), labels=ids)
elif a.model == "distilbert-mlm":
    cfg = tr.DistilBertConfig()
    model = tr.DistilBertForMaskedLM(cfg)

    def inputs():
        ids = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device="cuda")
        return dict(input_ids=ids, attention_mask=torch.ones_like(ids), labels=ids)
elif a.model == "bart":  # BART-base's shape
    cfg = tr.BartConfig(d_model=768, encoder_layers=6, decoder_layers=6, encoder_attention_heads=12,
                        decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072)
    model = tr.BartForConditionalGeneration(cfg)

    def inputs():
        return dict(input_ids=torch.randint(3, cfg.vocab_size, (a.batch, a.seq), device="cuda"),
                    labels=torch.randint(3, cfg.vocab_size, (a.batch, a.seq // 2), device="cuda"))
elif a.model.startswith("t5"):
    base = dict(decoder_start_token_id=0)  # as the published T5 configs set it
    cfg = tr.T5Config(**base) if a.model == "t5-small" else tr.T5Config(d_model=768, d_ff=3072, num_layers=12, num_heads=12, **base)
    model = tr.T5ForConditionalGeneration(cfg)

    def inputs():
        return dict(input_ids=torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device="cuda"),
                    labels=torch.randint(0, cfg.vocab_size, (a.batch, a.seq // 2), device="cuda"))
elif a.model == "whisper":
    cfg = tr.WhisperConfig(d_model=768, encoder_layers=12, decoder_layers=12, encoder_attention_heads=12,
                           decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072)
    model = tr.WhisperForConditionalGeneration(cfg)

    def inputs():
        return dict(input_features=torch.randn(a.batch, 80, 3000, device="cuda", dtype=jobcommon.dtype_of(a)),
                    labels=torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device="cuda"))
else:
    if a.model == "qwen2-0.5b-lora":  # Qwen2-0.5B's shape
        cfg = tr.Qwen2Config(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                             num_key_value_heads=2, vocab_size=151936, max_position_embeddings=4096,
                             tie_word_embeddings=True)
        model = tr.Qwen2ForCausalLM(cfg)
    elif a.model.startswith("qwen2"):  # Qwen2-1.5B's layer shape, 8 layers
        cfg = tr.Qwen2Config(hidden_size=1536, intermediate_size=8960, num_hidden_layers=8, num_attention_heads=12,
                             num_key_value_heads=2, vocab_size=151936, max_position_embeddings=4096,
                             tie_word_embeddings=True)
        model = tr.Qwen2ForCausalLM(cfg)
    else:  # llama-mha-lora: a key and a value head per query head (no grouping), 8 layers
        mha = a.model == "llama-mha-lora"
        cfg = tr.LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=8 if mha else 12,
                             num_attention_heads=16 if mha else 32, num_key_value_heads=16 if mha else 4,
                             vocab_size=32000, max_position_embeddings=4096)
        model = tr.LlamaForCausalLM(cfg)
    if a.model.endswith("-lora"):
        import peft

        model = model.to(torch.bfloat16) if a.precision == "bf16" else model
        model = peft.get_peft_model(model, peft.LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "v_proj"]))

    def inputs():
        ids = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device="cuda")
        return dict(input_ids=ids, labels=ids)
if a.ckpt:
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if a.model.endswith("-lora"):
        model.enable_input_require_grads()
if a.infer:
    def infer_inputs():
        x = inputs()
        x.pop("labels")
        if a.model.startswith("t5") or a.model == "bart":
            x["decoder_input_ids"] = x["input_ids"][:, : a.seq // 2]
        if a.model == "whisper":
            x["decoder_input_ids"] = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device="cuda")
        return x
    jobcommon.run(a, model, infer_inputs, None, cast=not a.model.endswith("-lora"))
else:
    jobcommon.run(a, model, inputs, lambda m, x: m(**x).loss, cast=not a.model.endswith("-lora"))

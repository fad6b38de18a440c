// Convolutional classifiers from their config (issue 28, round 4: cnn_config.cpp, cnn_graph.cpp,
// forward_cnn.cpp, estimate_cnn.cpp) and every other config of the corpus (tests/data/estimator/config-corpus:
// small config.json files of many model types with transformers 5.x's field names) estimated, never refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "core/estimator/cnn.hpp"
#include "core/estimator/cnn_graph.hpp"
#include "core/estimator/estimate.hpp"
#include "core/estimator/fit.hpp"
#include "core/units.hpp"
#include "test_files.hpp"

using namespace vramdoc::estimator;

namespace {

const std::string kCorpus = std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/estimator/config-corpus/";

ModelConfig corpus_model(const std::string& name) {
  auto m = parse_config_json(vramdoc::test::file_text(kCorpus + name + ".json"), name + ".json");
  EXPECT_TRUE(m.ok()) << name << ": " << (m.ok() ? "" : m.error());
  return m.ok() ? *m : ModelConfig{};
}

Options training(std::uint64_t batch, Precision precision = Precision::Fp32) {
  Options o;
  o.batch = batch, o.precision = precision, o.task = Task::ImageCls;
  return o;
}

// The live bytes at the peak without the workspaces: cuDNN's depend on the nearest measured convolution of
// each shape (capture/conv_workspace.hpp), not monotone in its size.
std::uint64_t live_at_peak(const Estimate& e) {
  std::uint64_t most = 0;
  for (const Phase& p : e.phases) {
    std::uint64_t sum = 0;
    for (const Term& t : p.terms) sum += t.key == "workspaces_bytes" ? 0 : t.bytes;
    most = std::max(most, sum);
  }
  return most;
}

bool any_warning(const Estimate& e, const std::string& part) {
  for (const auto& w : e.warnings) {
    if (w.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

// sum(p.numel() for p in model.parameters()) of the ForImageClassification models, derived from the
// modelling code (cnn_graph.cpp) and equal to the published counts of the same networks: torchvision's
// resnet18 / resnet50 / efficientnet_b0 / efficientnet_b3 / mobilenet_v2 (+1 label: 1001 classes), timm's
// convnext_tiny / convnextv2_tiny / regnety_040 / regnetx_002.
TEST(EstimatorCnn, ParameterCountsEqualTheModellingCode) {
  const std::map<std::string, std::uint64_t> expected = {
      {"resnet-18", 11689512},        {"resnet-50", 25557032},       {"convnext-tiny", 28589128},
      {"convnextv2-tiny", 28635496},  {"regnet-y-040", 20646656},    {"regnet-x-002", 2684792},
      {"efficientnet-b0", 5288548},   {"efficientnet-b3", 12233232}, {"mobilenet-v2", 3506153},
  };
  for (const auto& [name, params] : expected) {
    const ModelConfig m = corpus_model(name);
    ASSERT_EQ(m.kind, ModelKind::Cnn) << name;
    auto counted = cnn_parameters(m);
    ASSERT_TRUE(counted.ok()) << name << ": " << (counted.ok() ? "" : counted.error());
    EXPECT_EQ(*counted, params) << name;
    auto e = estimate(m, training(2));
    ASSERT_TRUE(e.ok()) << name << ": " << (e.ok() ? "" : e.error());
    EXPECT_EQ(e->n_params, params) << name;
  }
}

// Issue 28: {"model_type":"convnext","depths":...,"hidden_sizes":...} was refused ("missing field 'hidden_size'").
TEST(EstimatorCnn, ConvnextConfigWithoutHiddenSizeIsNotRefused) {
  auto m = parse_config_json(R"({"model_type":"convnext","depths":[3,3,9,3],"hidden_sizes":[96,192,384,768]})", "config.json");
  ASSERT_TRUE(m.ok()) << m.error();
  auto e = estimate(*m, Options{});
  ASSERT_TRUE(e.ok()) << e.error();
  EXPECT_GT(e->peak_allocated_bytes, 0u);
}

// fp32 AdamW: two fp32 states per parameter, the weights and (at the optimizer step) every gradient; SGD none.
TEST(EstimatorCnn, OptimizerStateAndWeightsAreTheParameters) {
  const ModelConfig m = corpus_model("resnet-50");
  auto adam = estimate(m, training(8));
  ASSERT_TRUE(adam.ok()) << adam.error();
  const Phase* step = nullptr;
  for (const Phase& p : adam->phases) step = p.name == "optimizer step" ? &p : step;
  ASSERT_NE(step, nullptr);
  std::map<std::string, std::uint64_t> t;
  for (const Term& x : step->terms) t[x.key] = x.bytes;
  EXPECT_EQ(t["optimizer_state_bytes"], 8 * adam->n_params);
  EXPECT_EQ(t["gradients_bytes"], 4 * adam->n_params);
  // weights plus the BatchNorm buffers (running mean and variance: two per BatchNorm weight, an int64 counter)
  EXPECT_GE(t["weights_bytes"], 4 * adam->n_params);
  EXPECT_LT(t["weights_bytes"], 4 * adam->n_params + 4 * adam->n_params / 50);
  Options sgd = training(8);
  sgd.optimizer = Optimizer::Sgd;
  auto plain = estimate(m, sgd);
  ASSERT_TRUE(plain.ok());
  for (const Phase& p : plain->phases) {
    for (const Term& x : p.terms) EXPECT_NE(x.key, "optimizer_state_bytes") << p.name;
  }
  EXPECT_LT(plain->peak_allocated_bytes, adam->peak_allocated_bytes);
}

// Memory never falls as the batch or the image grows (the live bytes; the allocator's peak counts whole blocks,
// a large block's unsplit remainder of up to 1 MiB included, and cuDNN's workspaces follow its measured grid);
// training needs more than inference; 16-bit less than fp32.
TEST(EstimatorCnn, MemoryGrowsWithBatchAndImage) {
  for (const char* name : {"resnet-50", "convnext-tiny", "efficientnet-b0", "mobilenet-v2", "regnet-y-040", "convnextv2-tiny"}) {
    const ModelConfig m = corpus_model(name);
    std::uint64_t last = 0;
    for (std::uint64_t b : {1, 2, 4, 16, 64}) {
      auto e = estimate(m, training(b, Precision::AmpBf16));
      ASSERT_TRUE(e.ok()) << name << ": " << e.error();
      EXPECT_GE(live_at_peak(*e), last) << name << " batch " << b;
      last = live_at_peak(*e);
      Options infer = training(b, Precision::Bf16);
      infer.mode = Mode::Infer;
      auto i = estimate(m, infer);
      ASSERT_TRUE(i.ok()) << name << ": " << i.error();
      EXPECT_LT(i->peak_allocated_bytes, e->peak_allocated_bytes) << name << " batch " << b;
    }
    last = 0;
    for (std::uint64_t side : {64, 128, 224, 320, 512}) {
      Options o = training(4);
      o.image_size = side;
      auto e = estimate(m, o);
      ASSERT_TRUE(e.ok()) << name << ": " << e.error();
      EXPECT_GE(live_at_peak(*e), last) << name << " image " << side;
      last = live_at_peak(*e);
    }
    auto fp32 = estimate(m, training(32)), bf16 = estimate(m, training(32, Precision::Bf16));
    ASSERT_TRUE(fp32.ok() && bf16.ok());
    EXPECT_LT(bf16->peak_allocated_bytes, fp32->peak_allocated_bytes) << name;
  }
}

// A ResNet's activations: the feature maps autograd keeps grow with the batch (at 64 images of 224 pixels
// more than 4 GiB in fp32: the stem's 64 x 112 x 112 output alone is kept three times); the cuDNN workspace
// and the cuBLAS workspaces appear where the capture's table and PyTorch put them.
TEST(EstimatorCnn, ResnetActivationsAreTheSavedFeatureMaps) {
  const ModelConfig m = corpus_model("resnet-50");
  auto e = estimate(m, training(64));
  ASSERT_TRUE(e.ok());
  std::uint64_t kept = 0;
  for (const Phase& p : e->phases) {
    for (const Term& t : p.terms) kept = std::max(kept, t.key == "activations_bytes" ? t.bytes : 0);
  }
  const std::uint64_t stem = 64ull * 64 * 112 * 112 * 4;  // conv output (BatchNorm's input), ReLU's output (max pool's)
  EXPECT_GT(kept, 2 * stem);
  EXPECT_GT(kept, 4 * vramdoc::GiB);
  EXPECT_LT(kept, 12 * vramdoc::GiB);
  std::uint64_t workspaces = 0;  // two cuBLAS handles in training (32 MiB each), cuDNN's of the convolution running
  for (const Term& t : e->phases[e->peak_phase].terms) workspaces += t.key == "workspaces_bytes" ? t.bytes : 0;
  EXPECT_GE(workspaces, 64 * vramdoc::MiB);
  EXPECT_GT(e->peak_reserved_bytes, e->peak_allocated_bytes - 1);
  EXPECT_GT(e->process_bytes, e->peak_reserved_bytes + 500 * vramdoc::MiB);  // the CUDA context and cuDNN's kernels
}

// Options a CNN cannot run are errors that say what it can; --max-batch keeps the unmeasured margin.
TEST(EstimatorCnn, OptionsItCannotRunAreClearErrors) {
  const ModelConfig m = corpus_model("resnet-18");
  Options lora = training(2);
  lora.mode = Mode::Lora;
  auto e = estimate(m, lora);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().find("--mode train or --mode infer"), std::string::npos) << e.error();
  Options seq = training(2);
  seq.task = Task::SeqCls;
  e = estimate(m, seq);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().find("image-cls"), std::string::npos) << e.error();
  Options huge = training(2);
  huge.image_size = 1 << 20;
  EXPECT_FALSE(estimate(m, huge).ok());
  Options many = training(1ull << 40);
  e = estimate(m, many);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().find("absurdly large"), std::string::npos) << e.error();
  auto ok = estimate(m, training(2));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->uncertainty_percent, 15u);
  EXPECT_TRUE(any_warning(*ok, "not yet measured"));
}

// Absurd or malformed fields: clear errors naming the field, never a crash or an overflow.
TEST(EstimatorCnn, MalformedConfigsAreClearErrors) {
  const std::pair<const char*, const char*> bad[] = {
      {R"({"model_type":"resnet","depths":[3,4,1e12,3]})", "depths"},
      {R"({"model_type":"resnet","hidden_sizes":[64,0,256,512]})", "hidden_sizes"},
      {R"({"model_type":"resnet","hidden_sizes":[64,128]})", "same length"},
      {R"({"model_type":"resnet","depths":"3,4,6,3"})", "depths"},
      {R"({"model_type":"resnet","image_size":1e9})", "image_size"},
      {R"({"model_type":"resnet","embedding_size":-64})", "embedding_size"},
      {R"({"model_type":"convnext","depths":[1000,1000,9,3]})", "layers"},
      {R"({"model_type":"efficientnet","kernel_sizes":[3,3]})", "one entry per stage"},
      {R"({"model_type":"efficientnet","width_coefficient":1e300})", "width_coefficient"},
      {R"({"model_type":"efficientnet","width_coefficient":1.0,"hidden_dim":2560})", "hidden_dim"},
      {R"({"model_type":"mobilenet_v2","depth_multiplier":-1})", "depth_multiplier"},
      {R"({"model_type":"regnet","groups_width":0})", "groups_width"},
  };
  for (const auto& [text, field] : bad) {
    auto m = parse_config_json(text, "config.json");
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_NE(m.error().find(field), std::string::npos) << text << " -> " << m.error();
    EXPECT_NE(m.error().find("config.json"), std::string::npos) << m.error();
  }
}

// Random values in every numeric field of every CNN config of the corpus: each parse and estimate ends in a
// result or a clear error (no crash, no hang, no overflowed total).
TEST(EstimatorCnn, FuzzedConfigsNeverCrash) {
  std::mt19937_64 rng(28);
  const nlohmann::json values[] = {0, -1, 1, 3, 7, 1e15, 2.5, "x", nlohmann::json::array(), nullptr, 1ull << 39, 65536};
  for (const char* name : {"resnet-50", "resnet-18", "regnet-y-040", "convnext-tiny", "convnextv2-tiny", "efficientnet-b0",
                           "mobilenet-v2", "van"}) {
    const auto base = nlohmann::json::parse(vramdoc::test::file_text(kCorpus + std::string(name) + ".json"));
    std::vector<std::string> keys = {"num_channels", "image_size", "embedding_size", "groups_width", "patch_size", "hidden_dim",
                                     "depth_divisor", "width_coefficient", "depth_coefficient", "depth_multiplier", "min_depth",
                                     "output_stride", "expand_ratio", "num_labels", "depths", "hidden_sizes", "strides", "kernel_sizes"};
    for (int round = 0; round < 60; ++round) {
      nlohmann::json cfg = base;
      const std::string& key = keys[rng() % keys.size()];
      nlohmann::json v = values[rng() % std::size(values)];
      if (key == "depths" || key == "hidden_sizes" || key == "strides" || key == "kernel_sizes") v = nlohmann::json::array({v, 2, v, 1});
      cfg[key] = v;
      auto m = parse_config_json(cfg.dump(), "fuzz.json");
      if (!m.ok()) {
        EXPECT_FALSE(m.error().empty());
        continue;
      }
      Options o = training(1 + rng() % 64, rng() % 2 ? Precision::AmpBf16 : Precision::Fp32);
      o.mode = rng() % 2 ? Mode::Train : Mode::Infer;
      auto e = estimate(*m, o);
      if (e.ok()) EXPECT_GE(e->process_bytes, e->peak_allocated_bytes) << cfg.dump();
      else EXPECT_FALSE(e.error().empty());
    }
  }
}

// Every config of the corpus (CNNs, decoders, encoders, encoder-decoders, vision and speech models spelled
// with transformers 5.x's field names) is estimated, training and inference; a model type the estimator does
// not read as its own says so with its margin.
TEST(EstimatorCnn, EveryConfigOfTheCorpusIsEstimated) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const std::string name = entry.path().stem().string();
    auto m = parse_config_json(vramdoc::test::file_text(entry.path().string()), name);
    ASSERT_TRUE(m.ok()) << name << ": " << m.error();
    for (Mode mode : {Mode::Train, Mode::Infer}) {
      Options o;
      o.mode = mode, o.batch = 2, o.seq = 128;
      auto e = estimate(*m, o);
      ASSERT_TRUE(e.ok()) << name << ": " << e.error();
      EXPECT_GT(e->n_params, 0u) << name;
      EXPECT_GT(e->peak_allocated_bytes, 32 * vramdoc::MiB) << name;  // more than a cuBLAS workspace
      if (m->stand_in || m->family == Family::Generic) {  // a model type no family reads as its own
        EXPECT_TRUE(any_warning(*e, "expect +-30 %")) << name;
        EXPECT_EQ(e->uncertainty_percent, 30u) << name;
      }
    }
  }
  EXPECT_GE(files, 40);
}

// transformers' attribute_map aliases are read for model types no family knows (configuration_xglm.py
// attention_heads, configuration_funnel.py block_sizes, configuration_reformer.py attn_layers,
// configuration_fsmt.py tgt_vocab_size, configuration_xlm.py emb_dim, configuration_mpt.py n_layers).
TEST(EstimatorCnn, AttributeMapAliasesAreRead) {
  struct Expect {
    const char* name;
    std::uint64_t hidden, layers, heads;
  };
  for (const Expect& x : {Expect{"xglm", 1024, 24, 16}, Expect{"funnel", 768, 12, 12}, Expect{"reformer", 256, 6, 2},
                          Expect{"xlm", 1024, 12, 8}, Expect{"mpt", 2048, 24, 16}, Expect{"codegen", 1024, 20, 16}}) {
    const ModelConfig m = corpus_model(x.name);
    EXPECT_EQ(m.hidden_size, x.hidden) << x.name;
    EXPECT_EQ(m.num_layers, x.layers) << x.name;
    EXPECT_EQ(m.num_heads, x.heads) << x.name;
  }
  const ModelConfig fsmt = corpus_model("fsmt");
  EXPECT_EQ(fsmt.vocab_size, 42024u);
  // Mamba is read as a state-space model since round 7 (ssm_config.cpp): its own fields, MambaConfig's defaults
  const ModelConfig mamba = corpus_model("mamba");
  EXPECT_EQ(mamba.family, Family::Mamba);
  EXPECT_EQ(mamba.ssm.inner, 1536u);
  EXPECT_EQ(mamba.ssm.state, 16u);
  EXPECT_EQ(mamba.ssm.conv_kernel, 4u);
  EXPECT_EQ(mamba.ssm.dt_rank, 48u);  // time_step_rank "auto": ceil(768 / 16)
  EXPECT_TRUE(mamba.warnings.empty());  // no "unknown model_type", no placeholder heads
  const ModelConfig rwkv = corpus_model("rwkv");  // no attention heads: heads of 64 assumed, and said
  bool said = false;
  for (const auto& w : rwkv.warnings) said = said || w.find("no attention heads") != std::string::npos;
  EXPECT_TRUE(said);
}

// A speech encoder (wav2vec2-style conv_dim) is its transformer as a generic encoder over --seq frames plus its
// convolutional feature extractor over the frames' samples, op by op: the extractor's parameters are
// modeling_wav2vec2.py's (wav2vec2-base: 4,200,448 - seven convolutions without bias, the first layer's
// GroupNorm), its feature maps grow with the audio and come on top of the encoder's peak in training.
TEST(EstimatorCnn, SpeechEncodersAddTheirFeatureExtractor) {
  const ModelConfig m = corpus_model("wav2vec2");
  ASSERT_TRUE(m.cnn.audio);
  auto extractor = build_audio_features(m.cnn, 160000, true);
  ASSERT_TRUE(extractor.ok()) << extractor.error();
  EXPECT_EQ(extractor->params, 4200448u);
  EXPECT_EQ(extractor->tensors[extractor->logits], 512u * 499);  // 10 s at 16 kHz: 499 frames of 512 features
  ModelConfig plain = m;
  plain.cnn.audio = false;
  std::uint64_t last = 0;
  for (std::uint64_t frames : {50, 200, 500}) {
    Options o;
    o.batch = 4, o.seq = frames, o.precision = Precision::AmpBf16;
    auto with = estimate(m, o), without = estimate(plain, o);
    ASSERT_TRUE(with.ok() && without.ok()) << (with.ok() ? without.error() : with.error());
    EXPECT_EQ(with->n_params, without->n_params + 4200448u);
    EXPECT_GT(with->peak_allocated_bytes, without->peak_allocated_bytes);
    const std::uint64_t extra = with->peak_allocated_bytes - without->peak_allocated_bytes;
    EXPECT_GT(extra, last) << frames << " frames";
    last = extra;
  }
  // 4 x 10 s in amp: the first layer keeps GroupNorm's fp32 input copy and GELU's fp32 input, 262 MB each
  EXPECT_GT(last, vramdoc::GiB / 2);
}

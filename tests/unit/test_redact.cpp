// The redactor on real-looking command lines: what must go (tokens, passwords, keys, URL
// credentials) and what must survive byte for byte (paths, numbers, model ids, hyperparameters).
// The secrets are random strings made for this test (tests/unit/secrets.hpp), none real.
#include <gtest/gtest.h>

#include <cctype>
#include <random>

#include "core/redact.hpp"
#include "mutate_text.hpp"
#include "secrets.hpp"

namespace vramdoc {
namespace {

using namespace test_secrets;

struct Case {
  std::string input;
  std::string expected;
};

std::vector<Case> secret_cases() {
  return {
      // Hugging Face
      {"huggingface-cli login --token " + kHf, "huggingface-cli login --token ***"},
      {"python train.py --hub_token=" + kHf + " --push_to_hub", "python train.py --hub_token=*** --push_to_hub"},
      {"HF_TOKEN=" + kHf + " python train.py", "HF_TOKEN=*** python train.py"},
      {"lm_eval --model hf --model_args pretrained=meta-llama/Llama-3.1-8B,token=" + kHf,
       "lm_eval --model hf --model_args pretrained=meta-llama/Llama-3.1-8B,token=***"},
      {"python run.py " + kHf, "python run.py ***"},
      // Weights & Biases (its keys are 40 hex digits: redacted by name, or after `login`)
      {"WANDB_API_KEY=" + kHex40 + " python train.py --report_to wandb", "WANDB_API_KEY=*** python train.py --report_to wandb"},
      {"wandb login " + kHex40, "wandb login ***"},
      {"python train.py wandb.api_key=" + kHex40, "python train.py wandb.api_key=***"},
      // OpenAI and similar
      {"OPENAI_API_KEY=" + kOpenAi + " python eval.py", "OPENAI_API_KEY=*** python eval.py"},
      {"python eval.py --api-key " + kOpenAi + " --model gpt-4o", "python eval.py --api-key *** --model gpt-4o"},
      {"python eval.py --apiKey=" + kRandom32, "python eval.py --apiKey=***"},
      // AWS
      {"AWS_ACCESS_KEY_ID=" + kAwsId + " AWS_SECRET_ACCESS_KEY=" + kAwsSecret + " aws s3 cp a s3://b/",
       "AWS_ACCESS_KEY_ID=*** AWS_SECRET_ACCESS_KEY=*** aws s3 cp a s3://b/"},
      {"aws configure set aws_secret_access_key " + kAwsSecret, "aws configure set aws_secret_access_key ***"},
      {"python upload.py " + kAwsId, "python upload.py ***"},
      {"curl 'https://bucket.s3.amazonaws.com/x.bin?X-Amz-Credential=" + kAwsId +
           "%2F20240101&X-Amz-Signature=" + kHex40 + "&X-Amz-Expires=600'",
       "curl 'https://bucket.s3.amazonaws.com/x.bin?X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Expires=600'"},
      // git URLs
      {"git clone https://alice:" + kPassword + "@github.com/org/repo.git",
       "git clone https://alice:***@github.com/org/repo.git"},
      {"git clone https://" + kGithub + "@github.com/org/repo.git", "git clone https://***@github.com/org/repo.git"},
      {"git clone https://oauth2:" + kGitlab + "@gitlab.com/org/repo.git", "git clone https://oauth2:***@gitlab.com/org/repo.git"},
      {"pip install git+https://x-access-token:" + kGithub + "@github.com/org/pkg.git",
       "pip install git+https://x-access-token:***@github.com/org/pkg.git"},
      // docker
      {"docker login -u alice -p " + kDocker + " registry.example.com", "docker login -u alice -p *** registry.example.com"},
      {"docker run --gpus all -e HF_TOKEN=" + kHf + " -e WANDB_API_KEY nvcr.io/nvidia/pytorch:24.01-py3",
       "docker run --gpus all -e HF_TOKEN=*** -e WANDB_API_KEY nvcr.io/nvidia/pytorch:24.01-py3"},
      {"docker login --password-stdin -u alice registry.example.com",
       "docker login --password-stdin -u alice registry.example.com"},
      // curl
      {"curl -H 'Authorization: Bearer " + kOpenAi + "' https://api.openai.com/v1/models",
       "curl -H 'Authorization: Bearer ***' https://api.openai.com/v1/models"},
      {"curl -H \"X-Api-Key: " + kRandom32 + "\" https://api.example.com", "curl -H \"X-Api-Key: ***\" https://api.example.com"},
      {"curl -u alice:" + kPassword + " https://example.com", "curl -u alice:*** https://example.com"},
      {"curl --cookie session=" + kRandom32 + " https://example.com", "curl --cookie *** https://example.com"},
      {"curl https://api.example.com/v1/data?api_key=" + kRandom32 + "&limit=10",
       "curl https://api.example.com/v1/data?api_key=***&limit=10"},
      {"curl -X POST https://hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/" + kRandom24,
       "curl -X POST https://hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/***"},
      // databases, shells, generic secrets
      {"PGPASSWORD=" + kPassword + " psql -h db -U alice", "PGPASSWORD=*** psql -h db -U alice"},
      {"python app.py --db postgres://alice:" + kPassword + "@db:5432/app", "python app.py --db postgres://alice:***@db:5432/app"},
      {"python app.py --password '" + kPassword + "' --port 8080", "python app.py --password '***' --port 8080"},
      {"python app.py --client-secret=" + kRandom24, "python app.py --client-secret=***"},
      {"sh -c 'python train.py --token=" + kRandom32 + "'", "sh -c 'python train.py --token=***'"},
      {"bash -c \"MYSQL_PWD=" + kPassword + " mysql -u root\"", "bash -c \"MYSQL_PWD=*** mysql -u root\""},
      {"kubectl create secret generic x --from-literal=password=" + kPassword,
       "kubectl create secret generic x --from-literal=password=***"},
      {"python serve.py --slack " + kSlack, "python serve.py --slack ***"},
      {"python serve.py --jwt " + kJwt, "python serve.py --jwt ***"},
      {"python serve.py --session " + kPassword, "python serve.py --session ***"},
      {"python serve.py --config '{\"api_key\": \"" + kPassword + "\"}'", "python serve.py --config '{\"api_key\": \"***\"}'"},
      {"sshpass -p " + kPassword + " ssh alice@host", "sshpass -p *** ssh alice@host"},
  };
}

TEST(Redact, RemovesEverySecretOfTheTable) {
  for (const auto& c : secret_cases()) {
    const std::string got = redact_text(c.input);
    EXPECT_EQ(got, c.expected) << c.input;
    for (const auto& secret : all_secrets()) EXPECT_EQ(got.find(secret), std::string::npos) << c.input;
  }
}

TEST(Redact, KeepsWhatIsNotSecretByteForByte) {
  const std::vector<std::string> survivors = {
      "torchrun --nproc_per_node 8 train.py --model_name_or_path meta-llama/Llama-3.1-8B --lr 3e-4 --bf16",
      "python train.py --per_device_train_batch_size 16 --max_new_tokens 512 --pad_token_id 0 --eos_token '</s>'",
      "python finetune.py --base_model mistralai/Mixtral-8x7B-Instruct-v0.1 --lora_r 16 --lora_alpha 32 --seed 42",
      "accelerate launch --config_file /etc/accelerate/fsdp.yaml train.py --output_dir /scratch/run-2024-01-01/ckpt",
      "python load.py --weights model-00001-of-00004.safetensors --revision c396b943081cb9ce32f602a058930166c2b9e14c",
      "python eval.py --dataset_text_field text --sort_key length --label_key label --image_key jpg",
      "python x.py --tokenizer_name_or_path Qwen/Qwen2.5-0.5B-Instruct --num_tokens 4096 --weight_decay 0.01",
      "python x.py --hf-token-file /run/secrets/hf --auth-type basic --token-env HF_TOKEN",
      "git checkout 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f && git clone git@github.com:org/repo.git",
      "ssh alice@gpu-node-1 nvidia-smi --query-gpu=memory.used --format=csv",
      "docker run -v /data:/data --shm-size 16g nvcr.io/nvidia/pytorch:24.01-py3 python -c 'import torch'",
      "python train.py run_name=llama3-8b-lora-r16-alpha32-lr2e-4 trainer.max_steps=1000 +data.path=/x/y.jsonl",
      "PWD=/home/alice/proj OLDPWD=/home/alice python3 train.py",
      "python -m torch.distributed.run --rdzv_endpoint=10.0.0.1:29500 --rdzv_id=123e4567-e89b-12d3-a456-426614174000",
      "python train.py --resume_from_checkpoint /home/alice/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B",
      "python BertForSequenceClassification_finetune.py --model LlamaForCausalLM --use_fast_tokenizer",
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 79.11 GiB total capacity)",
      "Process 2345761 has 129.27 GiB memory in use. If reserved but unallocated memory is large try setting "
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
      "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
      "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
      "shape[8192,8192,64] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
      "sh -c 'sleep 20' --steps 100",
      "can't open file 'train.py': [Errno 2] No such file or directory",
  };
  for (const auto& s : survivors) EXPECT_EQ(redact_text(s), s);
}

TEST(Redact, ArgvKeepsArgumentsAndReadsShellScriptsInside) {
  const std::vector<std::string> argv = {"/bin/sh", "-c", "sleep 20; python x.py --api-key " + kRandom32, "--token=" + kHf,
                                         "-H", "Authorization: Bearer " + kOpenAi, "--password", "two words", "--steps", "100"};
  const std::vector<std::string> expected = {"/bin/sh", "-c", "sleep 20; python x.py --api-key ***", "--token=***",
                                             "-H", "Authorization: Bearer ***", "--password", "***", "--steps", "100"};
  EXPECT_EQ(redact_argv(argv), expected);
}

TEST(Redact, SecretNamesAndTheirLookalikes) {
  for (const char* name : {"token", "HF_TOKEN", "--hub_token", "apiKey", "api-key", "AWS_SECRET_ACCESS_KEY", "PGPASSWORD",
                           "passwd", "MYSQL_PWD", "client_secret", "Authorization", "X-Api-Key", "cookie", "session_id",
                           "credentials", "oauth", "DB_PASS", "key", "private-key", "githubToken"})
    EXPECT_TRUE(is_secret_name(name)) << name;
  for (const char* name : {"max_new_tokens", "pad_token", "eos_token_id", "tokenizer", "token-file", "auth_type", "PWD",
                           "sort_key", "text_key", "author", "keyword", "monkey", "pass", "num_passes", "secret-name",
                           "password-stdin", "passport", "cwd"})
    EXPECT_FALSE(is_secret_name(name)) << name;
}

TEST(Redact, RandomLookingStringsButNotHashesOrWords) {
  for (const auto& s : all_secrets()) EXPECT_TRUE(looks_like_secret(s) || s == kHex40 || s == kPassword) << s;
  for (const char* word : {"c396b943081cb9ce32f602a058930166c2b9e14c", "123e4567-e89b-12d3-a456-426614174000",
                           "meta-llama/Llama-3.1-8B", "/home/alice/Models/Qwen2VLForConditionalGeneration/x9Yz3Kq7Lm2Np8Rs4Tv6",
                           "1234567890123456789012345", "BertForSequenceClassification", "hf_finetuned_model_for_chat",
                           "sk-learn-compatible-estimator", "model-00001-of-00004.safetensors", "3e-4", "0.001"})
    EXPECT_FALSE(looks_like_secret(word)) << word;
}

TEST(Redact, ExecutableNameIsTheProgramWithoutItsDirectory) {
  EXPECT_EQ(executable_name("/usr/bin/python3.11"), "python3.11");
  EXPECT_EQ(executable_name("ray::IDLE --token=x"), "ray::IDLE");
  EXPECT_EQ(executable_name(kHf), "***");
}

// The output is the input with some byte ranges replaced by ***, in order.
bool only_replaced(const std::string& input, const std::string& output) {
  std::size_t in = 0, out = 0;
  for (;;) {
    const std::size_t star = output.find(kRedacted, out);
    const std::string piece = output.substr(out, star == std::string::npos ? std::string::npos : star - out);
    if (star == std::string::npos)  // the last piece ends the input
      return input.size() >= in + piece.size() && input.ends_with(piece);
    const std::size_t found = input.find(piece, in);
    if (found == std::string::npos || (out == 0 && found != 0)) return false;
    in = found + piece.size();
    out = star + kRedacted.size();
  }
}

// Mutated command lines (broken quotes, cut options): the redactor never reads out of bounds,
// only replaces ranges of its input, and a token with a known prefix never survives.
TEST(Redact, FuzzedCommandLines) {
  std::mt19937 rng(20);
  const std::string alphabet = "-=:/@'\"\\ \t?&;,.{}_aZ09";
  const std::vector<std::string> prefixed = {kHf, kOpenAi, kGithub, kGitlab, kAwsId, kSlack, kDocker, kJwt};
  for (const auto& c : secret_cases()) {
    EXPECT_EQ(redact_text(c.expected), c.expected) << c.expected;
    for (int i = 0; i < 200; ++i) {
      const std::string text = fuzz::mutate_text(c.input, rng, alphabet);
      const std::string once = redact_text(text);
      EXPECT_TRUE(only_replaced(text, once)) << text << "\n" << once;
      for (const auto& secret : prefixed) {
        const std::size_t at = text.find(secret);
        const bool bounded = at != std::string::npos && (at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1])));
        const std::size_t end = at + secret.size();
        if (bounded && (end == text.size() || !std::isalnum(static_cast<unsigned char>(text[end])))) {
          EXPECT_EQ(once.find(secret), std::string::npos) << text;
        }
      }
    }
  }
}

}  // namespace
}  // namespace vramdoc

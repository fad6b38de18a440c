// Made-up credentials in the shapes real ones have (random strings generated for these tests;
// none was ever valid). The redaction tests check that none of them survives.
#pragma once
#include <string>
#include <vector>

namespace vramdoc::test_secrets {

inline const std::string kHf = "hf_5URYX45jqRO25g3uK5kbAAegiuE8LCAnmu";
inline const std::string kOpenAi = "sk-proj-O6RvvBfOHZ1FzfnKpcmgfmqSWstSqkNh5brTo21oKpdaZPNt";
inline const std::string kGithub = "ghp_riSPvMUC6j7OrJ1Bkkz7T3hSiXLBwoh6MdHm";
inline const std::string kGitlab = "glpat-I1S6sGMPTsNWXfPFrwVi";
inline const std::string kAwsId = "AKIA1LLFHSAUZ37DKH39";
inline const std::string kAwsSecret = "QbjnlQGkMfdyCbudrNq1JnXmBEzCmMqXrk5/awyN";
inline const std::string kHex40 = "c396b943081cb9ce32f602a058930166c2b9e14d";  // a W&B key's shape
inline const std::string kSlack = "xoxb-866407197533-4756390521501-EpIjsXUaiRxwHjboBHCp7zyS";
inline const std::string kDocker = "dckr_pat_xznIGTt0EOl85iir4bKQ6e4Xkvr";
inline const std::string kRandom32 = "DQV2pFiw25u5O5JjOVSURRI6WhVrPcHm";
inline const std::string kRandom24 = "u8jzPde0IgxLd6GncfBAepfJ";
inline const std::string kJwt =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.2hpChYgCfrL1spNxnyVmihA_2O76UMFxFkM_R5Kjp1v";
inline const std::string kPassword = "correct-Horse-7-battery";  // a passphrase of words: redacted by name only

inline std::vector<std::string> all_secrets() {
  return {kHf, kOpenAi, kGithub, kGitlab, kAwsId, kAwsSecret, kHex40, kSlack, kDocker, kRandom32, kRandom24, kJwt, kPassword};
}

}  // namespace vramdoc::test_secrets

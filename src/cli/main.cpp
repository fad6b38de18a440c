#include "cli/command.hpp"

int main(int argc, char** argv) { return vramdoc::cli::run_cli(argc, argv); }

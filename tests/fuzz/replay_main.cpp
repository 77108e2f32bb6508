// Replays a fuzz entry point over files and folders given on the command line (every regular file in a
// folder, sorted by name): --target onnx (the default), pcwt or options (fuzz_entry.h). A crash or sanitizer report ends the process; an exception other than
// perfcard::Error is reported with the file and makes the run fail. -v prints each file's outcome.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_entry.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  bool verbose = false;
  perfcard::fuzz::Entry entry = perfcard::fuzz::run_one;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-v") { verbose = true; continue; }
    if (arg == "--target" && i + 1 < argc) {
      entry = perfcard::fuzz::entry_named(argv[++i]);
      if (!entry) {
        std::fprintf(stderr, "replay: unknown target %s (onnx, pcwt, options)\n", argv[i]);
        return 2;
      }
      continue;
    }
    fs::path p(arg);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> in_dir;
      for (const auto& e : fs::directory_iterator(p, ec))
        if (e.is_regular_file()) in_dir.push_back(e.path());
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a folder\n", arg.c_str());
      return 2;
    }
  }
  int analyzed = 0, rejected = 0, failed = 0;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::string error;
    try {
      auto outcome = entry(bytes.data(), bytes.size(), &error);
      if (outcome == perfcard::fuzz::Outcome::Analyzed) ++analyzed;
      else ++rejected;
      if (verbose) std::printf("%s: %s\n", f.string().c_str(), error.empty() ? "analyzed" : error.c_str());
    } catch (const std::exception& e) {
      ++failed;
      std::fprintf(stderr, "FAIL %s: exception other than perfcard::Error: %s\n", f.string().c_str(), e.what());
    } catch (...) {
      ++failed;
      std::fprintf(stderr, "FAIL %s: non-standard exception\n", f.string().c_str());
    }
  }
  std::printf("replayed %zu files: %d analyzed, %d rejected with perfcard::Error, %d failed\n", files.size(),
              analyzed, rejected, failed);
  return failed == 0 && !files.empty() ? 0 : 1;
}

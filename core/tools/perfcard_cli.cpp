// perfcard: the command-line front of the core. Reads the file (mapped, not copied), calls the core,
// prints a table or JSON. All policy about files and processes lives here, not in the core.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "perfcard/analysis.h"
#include "perfcard/error.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/report.h"
#include "summary_table.h"

namespace {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY);
    if (fd_ < 0) throw perfcard::Error("cannot open '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) throw perfcard::Error("'" + path + "' is not a regular file");
    size_ = std::size_t(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
      if (p == MAP_FAILED) throw perfcard::Error("cannot map '" + path + "': " + std::strerror(errno));
      data_ = static_cast<const std::uint8_t*>(p);
    }
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }

 private:
  int fd_ = -1;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

int usage(std::ostream& os, int code) {
  os << "usage: perfcard analyze MODEL.onnx [--dim NAME=VALUE ...] [--per-node] [--json]\n"
        "\n"
        "  --dim NAME=VALUE  bind a symbolic input dim (e.g. --dim batch=8 --dim sequence=128);\n"
        "                    unbound dims default to 1 with a warning\n"
        "  --per-node        list every node with its shapes and costs\n"
        "  --json            print the JSON document (schema: docs/analyze-json.md)\n";
  return code;
}

int run_analyze(const std::vector<std::string>& args) {
  std::string path;
  std::vector<std::string> dims;
  bool json = false, per_node = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") json = true;
    else if (a == "--per-node") per_node = true;
    else if (a == "--dim" && i + 1 < args.size()) dims.push_back(args[++i]);
    else if (a.rfind("--dim=", 0) == 0) dims.push_back(a.substr(6));
    else if (a == "-h" || a == "--help") return usage(std::cout, 0);
    else if (!a.empty() && a[0] == '-') { std::cerr << "perfcard: unknown option '" << a << "'\n"; return usage(std::cerr, 2); }
    else if (path.empty()) path = a;
    else { std::cerr << "perfcard: more than one model given\n"; return 2; }
  }
  if (path.empty()) return usage(std::cerr, 2);
  perfcard::AnalyzeOptions opt;
  opt.dims = perfcard::parse_dim_bindings(dims);
  MappedFile file(path);
  perfcard::Model model = perfcard::load_model(file.bytes());
  perfcard::Analysis analysis = perfcard::analyze(model, opt);
  nlohmann::json doc = perfcard::analysis_to_json(model, analysis, per_node);
  if (json) std::cout << doc.dump(2) << "\n";
  else perfcard::tools::print_summary(std::cout, path, doc, per_node);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help") return usage(args.empty() ? std::cerr : std::cout, args.empty() ? 2 : 0);
  std::string cmd = args[0];
  args.erase(args.begin());
  try {
    if (cmd == "analyze") return run_analyze(args);
    std::cerr << "perfcard: unknown command '" << cmd << "'\n";
    return usage(std::cerr, 2);
  } catch (const perfcard::Error& e) {
    std::cerr << "perfcard: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "perfcard: error: out of memory\n";
    return 1;
  }
}

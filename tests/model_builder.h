// Builds small ONNX models in memory for the tests, with the same generated classes the loader uses.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "onnx/onnx.pb.h"

namespace perfcard::test {

using DimSpec = std::variant<std::int64_t, std::string>;  // a number or a symbol ("" = unnamed dynamic)

class ModelBuilder {
 public:
  explicit ModelBuilder(std::int64_t opset = 17);
  ModelBuilder& input(const std::string& name, int elem_type, std::vector<DimSpec> dims);
  ModelBuilder& input_unranked(const std::string& name, int elem_type);  // a type without a shape
  ModelBuilder& output(const std::string& name, int elem_type = 1);
  ModelBuilder& output(const std::string& name, int elem_type, std::vector<std::int64_t> dims);
  // An initializer with no payload beyond a few int64 contents (data may be empty: weights not needed).
  ModelBuilder& initializer(const std::string& name, int elem_type, std::vector<std::int64_t> dims,
                            std::vector<std::int64_t> int64_data = {});
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                        const std::string& name = "");
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  std::vector<std::uint8_t> bytes() const;

  static void attr(onnx::NodeProto& n, const std::string& name, std::int64_t v);
  static void attr(onnx::NodeProto& n, const std::string& name, std::vector<std::int64_t> v);
  static void attr(onnx::NodeProto& n, const std::string& name, float v);
  static void attr(onnx::NodeProto& n, const std::string& name, const std::string& v);
  // A GRAPH attribute: the body to fill in (nodes, inputs, outputs), named `name`.
  static onnx::GraphProto& graph_attr(onnx::NodeProto& n, const std::string& name);
  // value_info-style entries of a body: a typed input or output with known dims.
  static void body_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                         int elem_type, std::vector<std::int64_t> dims);

 private:
  onnx::ModelProto model_;
};

}  // namespace perfcard::test

#include "model_builder.h"

namespace perfcard::test {

ModelBuilder::ModelBuilder(std::int64_t opset) {
  model_.set_ir_version(8);
  model_.set_producer_name("perfcard-tests");
  auto* o = model_.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

ModelBuilder& ModelBuilder::input(const std::string& name, int elem_type, std::vector<DimSpec> dims) {
  auto* vi = graph().add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (std::holds_alternative<std::int64_t>(d)) dim->set_dim_value(std::get<std::int64_t>(d));
    else if (!std::get<std::string>(d).empty()) dim->set_dim_param(std::get<std::string>(d));
  }
  return *this;
}

ModelBuilder& ModelBuilder::input_unranked(const std::string& name, int elem_type) {
  auto* vi = graph().add_input();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  return *this;
}

ModelBuilder& ModelBuilder::output(const std::string& name, int elem_type, std::vector<std::int64_t> dims) {
  output(name, elem_type);
  auto* shape = graph().mutable_output(graph().output_size() - 1)->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (auto d : dims) shape->add_dim()->set_dim_value(d);
  return *this;
}

ModelBuilder& ModelBuilder::output(const std::string& name, int elem_type) {
  auto* vi = graph().add_output();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  return *this;
}

ModelBuilder& ModelBuilder::initializer(const std::string& name, int elem_type, std::vector<std::int64_t> dims,
                                        std::vector<std::int64_t> int64_data) {
  auto* t = graph().add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  for (auto d : dims) t->add_dims(d);
  for (auto v : int64_data) t->add_int64_data(v);
  if (int64_data.empty()) {  // weights: mark as external so no payload is needed
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value("weights.bin");
  }
  return *this;
}

onnx::NodeProto& ModelBuilder::node(const std::string& op, std::vector<std::string> inputs,
                                    std::vector<std::string> outputs, const std::string& name) {
  auto* n = graph().add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return *n;
}

std::vector<std::uint8_t> ModelBuilder::bytes() const {
  std::string s = model_.SerializeAsString();
  return {s.begin(), s.end()};
}

void ModelBuilder::attr(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void ModelBuilder::attr(onnx::NodeProto& n, const std::string& name, std::vector<std::int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

void ModelBuilder::attr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void ModelBuilder::attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

onnx::GraphProto& ModelBuilder::graph_attr(onnx::NodeProto& n, const std::string& name) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return *a->mutable_g();
}

void ModelBuilder::body_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                              int elem_type, std::vector<std::int64_t> dims) {
  auto* vi = list->Add();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (auto d : dims) shape->add_dim()->set_dim_value(d);
}

}  // namespace perfcard::test

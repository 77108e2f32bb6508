# Generates the ONNX lite classes with the host's protoc from the onnx.proto that Debian's python3-onnx
# ships (it already says optimize_for = LITE_RUNTIME). Nothing generated is committed.
find_program(PERFCARD_PROTOC protoc PATHS /usr/bin NO_CMAKE_FIND_ROOT_PATH REQUIRED)
find_file(PERFCARD_ONNX_PROTO onnx.proto
  PATHS /usr/lib/python3/dist-packages/onnx /usr/include/onnx
  NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
if(NOT PERFCARD_ONNX_PROTO)
  message(FATAL_ERROR "onnx.proto not found: install python3-onnx (scripts/setup.sh does)")
endif()
set(_gen "${CMAKE_BINARY_DIR}/generated")
set(ONNX_PB_SOURCES "${_gen}/onnx/onnx.pb.cc")
set(ONNX_PB_INCLUDE_DIR "${_gen}")
add_custom_command(
  OUTPUT "${_gen}/onnx/onnx.pb.cc" "${_gen}/onnx/onnx.pb.h"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${_gen}/onnx"
  COMMAND ${CMAKE_COMMAND} -E copy "${PERFCARD_ONNX_PROTO}" "${_gen}/onnx/onnx.proto"
  COMMAND ${PERFCARD_PROTOC} --proto_path=${_gen} --cpp_out=${_gen} ${_gen}/onnx/onnx.proto
  DEPENDS "${PERFCARD_ONNX_PROTO}"
  COMMENT "protoc: onnx.proto -> onnx.pb.cc (lite)")

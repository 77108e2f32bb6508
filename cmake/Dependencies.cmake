# Third-party dependencies, all from Debian: nothing is vendored.
#  native: libprotobuf-lite, nlohmann-json3-dev, catch2 and libeigen3-dev as installed packages.
#  wasm:   libprotobuf-lite built from Debian's protobuf source tarball (fetched by scripts/setup.sh),
#          header-only libraries through a folder of symlinks so /usr/include never joins the include path.

if(EMSCRIPTEN)
  # C++ exceptions are caught at the JS boundary (wasm/bindings.cpp) and in the tests. The whole build
  # compiles with them, so a core error unwinds with destructors run and leaks nothing. WebAssembly's own
  # exception handling (not Emscripten's JS emulation, which routes every call that may throw through a JS
  # invoke_* trampoline): a prediction runs ~3x faster and the module is ~8% smaller (gzip). Node >= 17
  # and every current browser (Chrome 95, Firefox 100, Safari 15.2) support it.
  add_compile_options(-fwasm-exceptions)
  add_link_options(-fwasm-exceptions)
  # 128-bit SIMD (Chrome 91, Firefox 89, Safari 16.4, Node 16) for the nn runtime's dense maths, where
  # it makes Eigen's products ~2.8x faster (docs/nn-runtime.md). core/CMakeLists.txt applies it to those
  # files only: the trees' lockstep walk ran ~10% slower with it and the page's module grew 6 KiB gzip.
  # A cache variable, so that a bench can build without it and compare.
  set(PERFCARD_WASM_SIMD_FLAGS "-msimd128" CACHE STRING "SIMD flags of the nn runtime in the wasm build")
  separate_arguments(PERFCARD_WASM_SIMD_OPTIONS UNIX_COMMAND "${PERFCARD_WASM_SIMD_FLAGS}")
  # Emscripten 3.1.6 has libc++ 13: the few C++20 library features it lacks and the core uses.
  add_compile_options("SHELL:-include ${CMAKE_SOURCE_DIR}/wasm/compat/libcxx_compat.h")
  # ctest runs wasm executables in node. Node 20's fetch cannot read file paths, which Emscripten 3.1.6
  # would try first for the .wasm: turn it off.
  find_program(PERFCARD_NODE NAMES node nodejs NO_CMAKE_FIND_ROOT_PATH REQUIRED)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${PERFCARD_NODE};--no-experimental-fetch")
  # Debian's emcc runs JS tools under node at link time and finds their modules through NODE_PATH: link
  # rules set it, so a plain `cmake --build build/wasm` works without it in the environment.
  set(PERFCARD_NODE_PATH "$ENV{NODE_PATH}")
  if(NOT PERFCARD_NODE_PATH AND EXISTS /usr/share/nodejs)
    set(PERFCARD_NODE_PATH /usr/share/nodejs)
  endif()
  if(PERFCARD_NODE_PATH)
    set_property(GLOBAL PROPERTY RULE_LAUNCH_LINK "${CMAKE_COMMAND} -E env NODE_PATH=${PERFCARD_NODE_PATH}")
  endif()
  # Executables (tests, tools) are CommonJS scripts; the repository's package.json may say "type":
  # "module", so the build tree says otherwise. wasm/ puts {"type": "module"} in dist/ for the ES-module API.
  file(CONFIGURE OUTPUT "${CMAKE_BINARY_DIR}/package.json" CONTENT "{\"type\": \"commonjs\"}\n")

  set(PERFCARD_CACHE "$ENV{HOME}/.cache/perfcard" CACHE PATH "where scripts/setup.sh keeps downloaded sources")
  set(PROTOBUF_TARBALL "${PERFCARD_CACHE}/protobuf_3.21.12.orig.tar.gz")
  if(NOT EXISTS "${PROTOBUF_TARBALL}")
    message(FATAL_ERROR "${PROTOBUF_TARBALL} is missing: run scripts/setup.sh first")
  endif()
  include(ExternalProject)
  set(_pb_src "${CMAKE_BINARY_DIR}/protobuf-src")
  set(_pb_bin "${CMAKE_BINARY_DIR}/protobuf-build")
  # -O3: parsing is ~3x slower at -Oz, and the lite runtime is small either way.
  ExternalProject_Add(protobuf_lite_wasm
    URL "${PROTOBUF_TARBALL}"
    URL_HASH SHA256=930c2c3b5ecc6c9c12615cf5ad93f1cd6e12d0aba862b572e076259970ac3a53
    SOURCE_DIR "${_pb_src}"
    BINARY_DIR "${_pb_bin}"
    CMAKE_ARGS
      -DCMAKE_TOOLCHAIN_FILE=${CMAKE_TOOLCHAIN_FILE}
      -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG"
      -Dprotobuf_BUILD_TESTS=OFF
      -Dprotobuf_BUILD_PROTOC_BINARIES=OFF
      -Dprotobuf_BUILD_LIBPROTOC=OFF
      -Dprotobuf_BUILD_SHARED_LIBS=OFF
      -Dprotobuf_WITH_ZLIB=OFF
    BUILD_COMMAND ${CMAKE_COMMAND} --build . --target libprotobuf-lite
    INSTALL_COMMAND ""
    BUILD_BYPRODUCTS "${_pb_bin}/libprotobuf-lite.a"
    DOWNLOAD_EXTRACT_TIMESTAMP ON)
  file(MAKE_DIRECTORY "${_pb_src}/src")
  add_library(protobuf_lite STATIC IMPORTED GLOBAL)
  set_target_properties(protobuf_lite PROPERTIES
    IMPORTED_LOCATION "${_pb_bin}/libprotobuf-lite.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_pb_src}/src")
  add_dependencies(protobuf_lite protobuf_lite_wasm)

  set(_links "${CMAKE_BINARY_DIR}/sysdeps/include")
  file(MAKE_DIRECTORY "${_links}")
  foreach(dir nlohmann catch2)
    if(NOT EXISTS "${_links}/${dir}")
      file(CREATE_LINK "/usr/include/${dir}" "${_links}/${dir}" SYMBOLIC)
    endif()
  endforeach()
  add_library(nlohmann_json INTERFACE)
  target_include_directories(nlohmann_json SYSTEM INTERFACE "${_links}")
  add_library(nlohmann_json::nlohmann_json ALIAS nlohmann_json)
  add_library(catch2_headers INTERFACE)
  target_include_directories(catch2_headers SYSTEM INTERFACE "${_links}")
  add_library(Catch2::Catch2 ALIAS catch2_headers)

  # Eigen (header-only, the nn runtime): Debian's headers serve the wasm build too. Emscripten's toolchain
  # confines package searches to its sysroot, where no Eigen3Config.cmake lives; then the headers are found
  # directly and reached through the symlink folder like the others.
  find_package(Eigen3 3.3 QUIET NO_MODULE)
  if(NOT TARGET Eigen3::Eigen)
    find_path(EIGEN3_INCLUDE_DIR Eigen/Core PATHS /usr/include/eigen3 NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
    if(NOT EIGEN3_INCLUDE_DIR)
      message(FATAL_ERROR "Eigen 3 headers not found in /usr/include/eigen3: run scripts/setup.sh first")
    endif()
    if(NOT EXISTS "${_links}/Eigen")
      file(CREATE_LINK "${EIGEN3_INCLUDE_DIR}/Eigen" "${_links}/Eigen" SYMBOLIC)
    endif()
    add_library(eigen_headers INTERFACE)
    target_include_directories(eigen_headers SYSTEM INTERFACE "${_links}")
    add_library(Eigen3::Eigen ALIAS eigen_headers)
  endif()
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(PROTOBUF_LITE REQUIRED IMPORTED_TARGET protobuf-lite)
  add_library(protobuf_lite INTERFACE)
  target_link_libraries(protobuf_lite INTERFACE PkgConfig::PROTOBUF_LITE)
  find_package(nlohmann_json 3.10 REQUIRED)
  find_package(Catch2 2.13 REQUIRED)
  find_package(Eigen3 3.3 REQUIRED NO_MODULE)
endif()

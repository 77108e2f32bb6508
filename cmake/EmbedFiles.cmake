# perfcard_embed(TARGET NAME FILE...): a static library whose one function returns each file's contents,
# so the CLI and the wasm module carry the device catalog and fitted constants without reading files.
function(perfcard_embed target)
  # A data file that does not exist yet (roofline.json before the first calibration) is embedded as
  # absent; the CLI then says which script makes it.
  set(files "")
  set(missing FALSE)
  foreach(f ${ARGN})
    # Files under the build tree are made by a custom command of the calling directory.
    string(FIND "${f}" "${CMAKE_BINARY_DIR}/" in_build)
    if(EXISTS "${f}" OR in_build EQUAL 0)
      list(APPEND files "${f}")
    else()
      set(missing TRUE)
    endif()
  endforeach()
  # Which files exist is decided when CMake configures. A weights file that appears later always comes
  # with a new weights/manifest.json (scripts refresh it), so the present files re-run the configure step
  # when they change and the newcomer is embedded without a manual reconfigure.
  if(missing)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${files})
  endif()
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}.cpp")
  string(REPLACE ";" "," files_arg "${files}")  # a CMake list would be split by the shell
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} "-DFILES=${files_arg}" -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake
    COMMENT "embedding data files"
    VERBATIM)
  add_library(${target} STATIC "${out}")
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/core/include)
endfunction()

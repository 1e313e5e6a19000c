# A unity build of the engine's libraries (MSSQL_CDC_UNITY=ON, what `make demo` builds): each
# library's sources are compiled a batch at a time, one translation unit per batch, so that the
# heavy headers (Arrow's above all) are parsed once per batch instead of once per file.
#
# CMake's own UNITY_BUILD writes absolute paths into its batch files, so that a clone in
# another folder never finds them in ccache. These batch files name each source by its path
# under src/ (an include directory of every library), so that every clone writes the same
# batch files and ccache serves one clone's objects to the next.
set(MSSQL_CDC_UNITY_BATCH_SIZE 16 CACHE STRING "Sources per translation unit in a unity build")

function(mssql_cdc_unity_build target)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(batch_files "")
  set(text "")
  set(in_batch 0)
  set(index 0)
  list(SORT sources)
  list(APPEND sources "<end>")
  foreach(source IN LISTS sources)
    if(NOT source STREQUAL "<end>")
      cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${source_dir})
      cmake_path(RELATIVE_PATH source BASE_DIRECTORY ${PROJECT_SOURCE_DIR}/src OUTPUT_VARIABLE path)
      string(APPEND text "#include \"${path}\"\n")
      math(EXPR in_batch "${in_batch} + 1")
    endif()
    if(in_batch GREATER 0 AND (in_batch EQUAL MSSQL_CDC_UNITY_BATCH_SIZE OR source STREQUAL "<end>"))
      set(batch ${PROJECT_BINARY_DIR}/unity/${target}_${index}.cc)
      # Written only when its text changes, so that a second configure rebuilds nothing.
      file(CONFIGURE OUTPUT ${batch} CONTENT "${text}" @ONLY)
      list(APPEND batch_files ${batch})
      set(text "")
      set(in_batch 0)
      math(EXPR index "${index} + 1")
    endif()
  endforeach()
  set_property(TARGET ${target} PROPERTY SOURCES ${batch_files})
endfunction()

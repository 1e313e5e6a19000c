# Arrow C++ and Parquet C++ from the pyarrow wheel installed in the Python environment.
# Debian has no Arrow C++ package; the wheel ships headers and shared libraries, and linking
# against them keeps the C++ engine and pyarrow on one Arrow build (zero-copy in Python).
# PYARROW_PYTHON names the Python whose pyarrow to take, by default the build's own: the abi3
# wheel's build names .venv's, so that every object but the extension's own is the source
# build's, found again by ccache (one pyarrow version's Arrow C++ is the same library, whichever
# Python its wheel is for).
set(PYARROW_PYTHON "${Python_EXECUTABLE}" CACHE FILEPATH "The Python whose pyarrow gives Arrow C++")
execute_process(
  COMMAND ${PYARROW_PYTHON} -c "import pyarrow; print(pyarrow.get_include()); print(pyarrow.get_library_dirs()[0]); print(pyarrow.__version__)"
  OUTPUT_VARIABLE _pyarrow_out OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _pyarrow_rc)
if(NOT _pyarrow_rc EQUAL 0)
  message(FATAL_ERROR "pyarrow is not importable by ${PYARROW_PYTHON}: run scripts/setup.sh (or make build)")
endif()
string(REPLACE "\n" ";" _pyarrow_out "${_pyarrow_out}")
list(GET _pyarrow_out 0 PYARROW_INCLUDE_DIR)
list(GET _pyarrow_out 1 PYARROW_LIBRARY_DIR)
list(GET _pyarrow_out 2 PYARROW_VERSION)
message(STATUS "Arrow C++ from pyarrow ${PYARROW_VERSION}: ${PYARROW_LIBRARY_DIR}")

foreach(_lib arrow arrow_compute arrow_s3 parquet)
  if(NOT EXISTS ${PYARROW_LIBRARY_DIR}/lib${_lib}.so)
    message(FATAL_ERROR "${PYARROW_LIBRARY_DIR}/lib${_lib}.so is missing: run "
      "'python -c \"import pyarrow; pyarrow.create_library_symlinks()\"' (scripts/setup.sh does)")
  endif()
  add_library(pyarrow::${_lib} SHARED IMPORTED)
  set_target_properties(pyarrow::${_lib} PROPERTIES
    IMPORTED_LOCATION ${PYARROW_LIBRARY_DIR}/lib${_lib}.so
    INTERFACE_INCLUDE_DIRECTORIES ${PYARROW_INCLUDE_DIR})
endforeach()
set_target_properties(pyarrow::parquet PROPERTIES INTERFACE_LINK_LIBRARIES pyarrow::arrow)
set_target_properties(pyarrow::arrow_compute PROPERTIES INTERFACE_LINK_LIBRARIES pyarrow::arrow)
set_target_properties(pyarrow::arrow_s3 PROPERTIES INTERFACE_LINK_LIBRARIES pyarrow::arrow)

# `make wheel` (MSSQL_CDC_WHEEL=ON): the extension as a manylinux_2_28 wheel needs it. Every
# library the extension uses beyond glibc, libgcc_s and pyarrow's Arrow is linked in
# statically (OpenSSL, SQLite, unixODBC, libstdc++; fmt, spdlog and toml++ are headers in
# every build), its one export is PyInit__core, and the link is against glibc 2.28 (decision
# 0012). Included before the libraries are looked for.
if(NOT CMAKE_SYSTEM_PROCESSOR STREQUAL "x86_64")
  message(FATAL_ERROR "the wheel build links against zig's x86_64 glibc 2.28: build it on x86_64")
endif()
set(OPENSSL_USE_STATIC_LIBS TRUE)

function(_mssql_cdc_static_archive var name)
  find_library(${var} NAMES lib${name}.a REQUIRED NO_CACHE)
  set(${var} ${${var}} PARENT_SCOPE)
endfunction()

# unixODBC's driver manager and its installer library; the libltdl they load drivers with is
# cmake/manylinux/ltdl_compat.c.
function(mssql_cdc_wheel_odbc)
  _mssql_cdc_static_archive(_odbc odbc)
  _mssql_cdc_static_archive(_odbcinst odbcinst)
  set_target_properties(ODBC::ODBC PROPERTIES IMPORTED_LOCATION ${_odbc}
    INTERFACE_LINK_LIBRARIES "${_odbcinst};${CMAKE_DL_LIBS};Threads::Threads")
endfunction()

# After find_package: point the imported targets at static archives, and link with link.sh.
macro(mssql_cdc_wheel_libraries)
  _mssql_cdc_static_archive(_sqlite sqlite3)
  set_target_properties(SQLite::SQLite3 PROPERTIES IMPORTED_LOCATION ${_sqlite})
  mssql_cdc_wheel_odbc()
  # The glibc 2.28 link (cmake/manylinux/link.sh) and what it needs from the system's g++.
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.a
                  OUTPUT_VARIABLE _libstdcxx OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libgcc_s.so.1
                  OUTPUT_VARIABLE _libgcc_s OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(CMAKE_CXX_CREATE_SHARED_MODULE
      "${PROJECT_SOURCE_DIR}/cmake/manylinux/link.sh ${Python_EXECUTABLE} ${_libstdcxx} ${_libgcc_s} -- <LINK_FLAGS> -shared -o <TARGET> <OBJECTS> <LINK_LIBRARIES>")
endmacro()

# The extension: the shims for what glibc 2.28 lacks and for libltdl, and the export map,
# which keeps every symbol of the static libraries inside.
function(mssql_cdc_wheel_module target)
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/manylinux/glibc_compat.c
                                   ${PROJECT_SOURCE_DIR}/cmake/manylinux/ltdl_compat.c)
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/manylinux/exports.map)
endfunction()

# `cmake --install`: tkc, tk-opt, the headers, the libraries, the stdlib and
# the CMake package, so that `find_package(tk CONFIG)` gives tk::runtime,
# tk::sim, tk::compiler, tk::tkc and tk_add_kernels (docs/aot.md). Also
# `cpack -G DEB` of the same tree.
include(CMakePackageConfigHelpers)
set(TK_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tk)
set(TK_STDLIB_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/tk/stdlib)

# The static libraries behind tk::sim and tk::compiler: installed so those
# link, exported under tk::internal_* names nobody should use directly.
set(tk_internal_libs tk_cuda tk_sim tk_lang tk_syntax tk_parser tk_hostexpr tk_ir tk_lower tk_nvptx tk_llvm)
foreach(lib IN LISTS tk_internal_libs)
  string(REGEX REPLACE "^tk_" "internal_" name ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${name})
endforeach()

install(TARGETS tk_runtime tk_sim_device tk_driver tk_tune tk_compiler ${tk_internal_libs} tkc tk-opt
  EXPORT tkTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Without their debug info: 525 MB of a RelWithDebInfo build (tkc alone 132
# MB) become about 17 MB. TK_INSTALL_DEBUG=ON keeps it, for a debug package.
option(TK_INSTALL_DEBUG "install binaries and libraries with their debug info" OFF)
if(NOT TK_INSTALL_DEBUG AND CMAKE_STRIP)
  set(tk_stripped)
  foreach(t IN ITEMS tk_runtime tk_sim_device tk_driver tk_tune tk_compiler ${tk_internal_libs})
    if(TARGET ${t})
      get_target_property(type ${t} TYPE)
      if(type STREQUAL "STATIC_LIBRARY")
        list(APPEND tk_stripped "${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:${t}>")
      endif()
    endif()
  endforeach()
  foreach(t IN ITEMS tkc tk-opt)
    list(APPEND tk_stripped "${CMAKE_INSTALL_BINDIR}/$<TARGET_FILE_NAME:${t}>")
  endforeach()
  install(CODE "
    foreach(f ${tk_stripped})
      set(path \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/\${f}\")
      if(EXISTS \"\${path}\")
        execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug \"\${path}\" RESULT_VARIABLE rc)
        if(rc)
          message(FATAL_ERROR \"cannot strip \${path}\")
        endif()
      endif()
    endforeach()")
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tk DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/stdlib/ DESTINATION ${TK_STDLIB_INSTALL_DIR} FILES_MATCHING PATTERN "*.tk")
install(EXPORT tkTargets NAMESPACE tk:: DESTINATION ${TK_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tkConfig.cmake.in ${PROJECT_BINARY_DIR}/tkConfig.cmake
  INSTALL_DESTINATION ${TK_INSTALL_CMAKEDIR}
  PATH_VARS TK_STDLIB_INSTALL_DIR)
# 0.x: a minor version may change the bundle format and the generated code.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tkConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tkConfig.cmake ${PROJECT_BINARY_DIR}/tkConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/tkFunctions.cmake
        DESTINATION ${TK_INSTALL_CMAKEDIR})

set(CPACK_PACKAGE_NAME tk)
set(CPACK_PACKAGE_VENDOR "tk")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "tk: a tile-based GPU kernel language, compiler, launcher runtime and sim")
set(CPACK_PACKAGE_CONTACT "tk maintainers")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libllvm19, libboost-context1.74.0, libstdc++6")
if(TK_USE_MIMALLOC AND mimalloc_FOUND)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libmimalloc2.0")
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
include(CPack)

# tk_add_kernels: compiles .tk files to typed C++ launchers at build time
# (`tkc compile --emit cpp`) and adds them to a target. Installed with tk and
# included by tkConfig.cmake; the tk build tree includes it too. See docs/aot.md.
#
#   tk_add_kernels(<target>
#     SOURCES a.tk [b.tk ...]     .tk files; each gives <stem>.h (C++),
#                                 <stem>_c.h (C) and <stem>.cpp
#     [KERNELS k1 k2 ...]         kernels to generate launchers for (default:
#                                 every kernel of each file; each file takes
#                                 the ones it defines)
#     [DEFINES NAME=VALUE ...]    const values; several values of one name
#                                 compile one variant each, chosen at launch
#     [ARCHS sm_80 sm_90 ...]     PTX embedded per arch (default: sm_80)
#     [NUM_WARPS n]               warps per block (default: 4)
#     [IMPORT_PATHS dir ...]      tkc -I: where imports are looked for
#     [TUNE_TABLES t.json ...]    `tkc tune --json` reports: best config per key
#     [SPECIALISE auto|none])     integer specialisations (default: auto)
#
# The generated headers are found as "<stem>.h" / "<stem>_c.h" by <target>, which links
# tk::runtime. tkc writes a depfile, so a change to a .tk file or to any file
# it imports re-runs it.
function(tk_add_kernels target)
  cmake_parse_arguments(TK "" "NUM_WARPS;SPECIALISE" "SOURCES;KERNELS;DEFINES;ARCHS;IMPORT_PATHS;TUNE_TABLES" ${ARGN})
  if(TK_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tk_add_kernels(${target}): unknown arguments: ${TK_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TK_SOURCES)
    message(FATAL_ERROR "tk_add_kernels(${target}): no SOURCES given")
  endif()
  if(NOT TARGET tk::tkc OR NOT TARGET tk::runtime)
    message(FATAL_ERROR "tk_add_kernels(${target}): tk::tkc and tk::runtime are not defined (find_package(tk) first)")
  endif()

  set(flags)
  foreach(k IN LISTS TK_KERNELS)
    list(APPEND flags -k ${k})
  endforeach()
  if(TK_KERNELS)
    list(APPEND flags --skip-missing-kernels)
  endif()
  foreach(d IN LISTS TK_DEFINES)
    list(APPEND flags -D ${d})
  endforeach()
  foreach(a IN LISTS TK_ARCHS)
    list(APPEND flags --arch ${a})
  endforeach()
  if(TK_NUM_WARPS)
    list(APPEND flags --num-warps ${TK_NUM_WARPS})
  endif()
  if(TK_SPECIALISE)
    list(APPEND flags --specialise ${TK_SPECIALISE})
  endif()
  set(tables)
  foreach(t IN LISTS TK_TUNE_TABLES)
    get_filename_component(t ${t} ABSOLUTE)
    list(APPEND flags --tune-table ${t})
    list(APPEND tables ${t})
  endforeach()
  foreach(i IN LISTS TK_IMPORT_PATHS)
    get_filename_component(i ${i} ABSOLUTE)
    list(APPEND flags -I ${i})
  endforeach()

  set(dir ${CMAKE_CURRENT_BINARY_DIR}/tk_kernels/${target})
  file(MAKE_DIRECTORY ${dir})
  set(stems)
  foreach(src IN LISTS TK_SOURCES)
    get_filename_component(src ${src} ABSOLUTE)
    get_filename_component(stem ${src} NAME_WE)
    if(stem IN_LIST stems)
      message(FATAL_ERROR "tk_add_kernels(${target}): two SOURCES are named ${stem}.tk; their launchers would clash")
    endif()
    list(APPEND stems ${stem})
    add_custom_command(
      OUTPUT ${dir}/${stem}.h ${dir}/${stem}.cpp ${dir}/${stem}_c.h
      COMMAND $<TARGET_FILE:tk::tkc> compile ${src} --emit cpp -o ${dir}/${stem} --depfile ${dir}/${stem}.d ${flags}
      DEPENDS ${src} ${tables} $<TARGET_FILE:tk::tkc>
      DEPFILE ${dir}/${stem}.d
      COMMENT "tkc: launchers for ${stem}.tk"
      VERBATIM)
    target_sources(${target} PRIVATE ${dir}/${stem}.h ${dir}/${stem}_c.h ${dir}/${stem}.cpp)
  endforeach()
  target_include_directories(${target} PRIVATE ${dir})
  target_link_libraries(${target} PRIVATE tk::runtime)
endfunction()

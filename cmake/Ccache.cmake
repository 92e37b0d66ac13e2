# ccache for every build of this tree (the main one, `make asan`'s, the
# fuzzer's), shared by every clone on a machine: CI builds a fresh clone each
# time. Paths under the source root ${TK_CCACHE_ROOT} are hashed relative to
# it and the working directory is not hashed, so a second clone hits the
# first one's objects; compile definitions hold no absolute path for the same
# reason (tests/CMakeLists.txt, runtime/CMakeLists.txt). The price: a cached
# object's debug info may name the other clone's build directory.
find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(TK_CCACHE ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${TK_CCACHE_ROOT} CCACHE_NOHASHDIR=true ${CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${TK_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${TK_CCACHE})
endif()

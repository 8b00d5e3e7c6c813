# Script mode (cmake -P). Two uses:
#   -DSRC_DIR=... -DPRINT_HASH=1     print the source hash of a tree and exit
#   -DSRC_DIR=... -DOUT=file.cpp ... write the provenance translation unit
# The source hash covers every file that feeds the prover, the harness and the daemon: prover/,
# cuda/, harness/, daemon/, cmake/ and the top-level CMakeLists.txt (documentation excluded). Variant
# flags are deliberately not in it: two presets of one tree share a source hash.
if(NOT SRC_DIR)
  message(FATAL_ERROR "provenance_gen.cmake: SRC_DIR is required")
endif()
# The globs below need an absolute folder: with a relative one (-DSRC_DIR=.) they found no file,
# and the hash covered CMakeLists.txt alone. A relative folder is taken from the working folder.
get_filename_component(SRC_DIR "${SRC_DIR}" ABSOLUTE)
set(_files "")
foreach(_d prover cuda harness daemon cmake)
  if(EXISTS ${SRC_DIR}/${_d})
    file(GLOB_RECURSE _f LIST_DIRECTORIES false RELATIVE ${SRC_DIR} ${SRC_DIR}/${_d}/*)
    list(APPEND _files ${_f})
  endif()
endforeach()
if(NOT _files)
  message(FATAL_ERROR "provenance_gen.cmake: ${SRC_DIR} holds none of prover/, cuda/, harness/, daemon/, cmake/: not a cuzk tree")
endif()
list(APPEND _files CMakeLists.txt)
list(FILTER _files EXCLUDE REGEX "\\.md$")
list(SORT _files)
set(_manifest "")
foreach(_f IN LISTS _files)
  file(SHA256 ${SRC_DIR}/${_f} _h)
  string(APPEND _manifest "${_f} ${_h}\n")
endforeach()
string(SHA256 SOURCE_HASH "${_manifest}")
list(LENGTH _files SOURCE_COUNT)
if(PRINT_HASH)
  execute_process(COMMAND ${CMAKE_COMMAND} -E echo "${SOURCE_HASH}")
  return()
endif()

set(GIT_COMMIT "unknown")
set(GIT_DIRTY "unknown")
find_program(_git git)
if(_git)
  execute_process(COMMAND ${_git} -C ${SRC_DIR} rev-parse HEAD
    OUTPUT_VARIABLE _c RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_rc EQUAL 0)
    set(GIT_COMMIT ${_c})
    execute_process(COMMAND ${_git} -C ${SRC_DIR} status --porcelain --untracked-files=no
      OUTPUT_VARIABLE _s RESULT_VARIABLE _rc2 ERROR_QUIET)
    if(_rc2 EQUAL 0)
      if(_s STREQUAL "")
        set(GIT_DIRTY "false")
      else()
        set(GIT_DIRTY "true")
      endif()
    endif()
  endif()
endif()

configure_file(${CMAKE_CURRENT_LIST_DIR}/provenance.cpp.in ${OUT}.tmp @ONLY)
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
file(REMOVE ${OUT}.tmp)

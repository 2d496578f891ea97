# dmlc_add_library(TARGET SOURCE FILE [NAME NAME] [TARGET_TRIPLE TRIPLE]
#                  [OPTIONS ARG...])
#
# Compiles the graph in FILE (.dmlir) ahead of time, at build time:
#   dmlc compile FILE -o ${CMAKE_CURRENT_BINARY_DIR}/TARGET --emit=obj,header --name=NAME
# and makes TARGET a static library of TARGET.o whose users have TARGET.h on
# their include path: #include "TARGET.h", call NAME_run() (docs/aot.md).
# The object needs no libdmlc, so neither does a program linking TARGET.
#
#   NAME           the symbol prefix, a C identifier (default: TARGET)
#   TARGET_TRIPLE  an LLVM target triple (--target; default: the host's)
#   OPTIONS        more dmlc compile options, e.g. --mcpu=x86-64-v3 -O3.
#                  Without --mcpu the object is built for the build
#                  machine's CPU: give one when the program runs elsewhere.
#
# The dmlc command is dmlc::dmlc_tool, or DMLC_EXECUTABLE when that is set
# (e.g. a host dmlc while cross-compiling).
include_guard(GLOBAL)

function(dmlc_add_library target)
  set(usage "dmlc_add_library(TARGET SOURCE FILE [NAME NAME] [TARGET_TRIPLE TRIPLE] [OPTIONS ARG...])")
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "SOURCE;NAME;TARGET_TRIPLE" "OPTIONS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dmlc_add_library(${target}): unexpected arguments "
                        "'${arg_UNPARSED_ARGUMENTS}'; usage: ${usage}")
  endif()
  if(arg_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "dmlc_add_library(${target}): ${arg_KEYWORDS_MISSING_VALUES} "
                        "needs a value; usage: ${usage}")
  endif()
  if(NOT arg_SOURCE)
    message(FATAL_ERROR "dmlc_add_library(${target}): SOURCE FILE is required; usage: ${usage}")
  endif()
  if(TARGET ${target})
    message(FATAL_ERROR "dmlc_add_library(${target}): a target '${target}' already exists")
  endif()
  if(NOT DEFINED arg_NAME)
    set(arg_NAME ${target})
    set(name_from "the target name")
  else()
    set(name_from "NAME")
  endif()
  if(NOT arg_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "dmlc_add_library(${target}): ${name_from} '${arg_NAME}' is not a C "
                        "identifier (it prefixes the symbols, ${arg_NAME}_run); give NAME")
  endif()

  if(DMLC_EXECUTABLE)
    set(dmlc "${DMLC_EXECUTABLE}")
    set(dmlc_depends "${DMLC_EXECUTABLE}")
  elseif(TARGET dmlc::dmlc_tool)
    set(dmlc dmlc::dmlc_tool)
    set(dmlc_depends dmlc::dmlc_tool)
  else()
    message(FATAL_ERROR "dmlc_add_library(${target}): no dmlc command: find_package(dmlc) "
                        "defines dmlc::dmlc_tool, or set DMLC_EXECUTABLE")
  endif()

  get_filename_component(source "${arg_SOURCE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(stem "${CMAKE_CURRENT_BINARY_DIR}/${target}")
  set(flags --emit=obj,header "--name=${arg_NAME}")
  if(arg_TARGET_TRIPLE)
    list(APPEND flags "--target=${arg_TARGET_TRIPLE}")
  endif()
  add_custom_command(OUTPUT "${stem}.o" "${stem}.h"
    COMMAND ${dmlc} compile "${source}" -o "${stem}" ${flags} ${arg_OPTIONS}
    DEPENDS "${source}" ${dmlc_depends}
    COMMENT "dmlc compile ${arg_SOURCE} -> ${target}.o, ${target}.h"
    VERBATIM)

  add_library(${target} STATIC "${stem}.o" "${stem}.h")
  # Only an object: CMake cannot tell the archiving language by itself.
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("C" IN_LIST languages)
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE C)
  elseif("CXX" IN_LIST languages)
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
  else()
    message(FATAL_ERROR "dmlc_add_library(${target}): enable C or CXX in project()")
  endif()
  target_include_directories(${target} INTERFACE "${CMAKE_CURRENT_BINARY_DIR}")
endfunction()

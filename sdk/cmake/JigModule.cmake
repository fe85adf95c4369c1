# jig_add_module(<target> SOURCES <src>... [LIBRARIES <lib>...])
#
# Builds one jig module: a MODULE library named <target>.so that exports only
# the descriptor symbol (hidden visibility + version script), links with
# -z now -z relro -z noexecstack, and refuses undefined symbols.
# Used in tree by jig's own plugins and out of tree through find_package(JigSDK).
function(jig_add_module target)
  cmake_parse_arguments(JM "" "" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT JM_SOURCES)
    message(FATAL_ERROR "jig_add_module(${target}): SOURCES is required")
  endif()
  add_library(${target} MODULE ${JM_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    C_STANDARD 11
    C_STANDARD_REQUIRED ON
    C_VISIBILITY_PRESET hidden
    POSITION_INDEPENDENT_CODE ON
    LINK_DEPENDS "${JIG_MODULE_MAP}")
  target_include_directories(${target} PRIVATE "${JIG_SDK_INCLUDE_DIR}")
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  target_link_options(${target} PRIVATE
    "-Wl,--version-script=${JIG_MODULE_MAP}"
    -Wl,-z,now -Wl,-z,relro -Wl,-z,noexecstack -Wl,-z,defs)
  if(JM_LIBRARIES)
    target_link_libraries(${target} PRIVATE ${JM_LIBRARIES})
  endif()
endfunction()

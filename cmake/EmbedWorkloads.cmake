# Writes OUTPUT: a C++ source that holds every workloads/*.yaml file as a string, so that the
# built-in workloads travel inside the binaries (run with cmake -P, from workload/CMakeLists.txt
# and suite/CMakeLists.txt).
# Also for the built-in suites (suites/*.yaml): HEADER and FUNCTION name what the source defines.
if(NOT DEFINED HEADER)
  set(HEADER "workload/workload_parser.h")
endif()
if(NOT DEFINED FUNCTION)
  set(FUNCTION "BuiltinWorkloadFiles")
endif()
file(GLOB files "${WORKLOAD_DIR}/*.yaml")
list(SORT files)
set(body "")
foreach(file IN LISTS files)
  get_filename_component(name "${file}" NAME_WE)
  file(READ "${file}" text)
  string(FIND "${text}" ")dbload_yaml\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains the embedding delimiter )dbload_yaml\"")
  endif()
  string(APPEND body "      {\"${name}\", R\"dbload_yaml(${text})dbload_yaml\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${WORKLOAD_DIR}/*.yaml by cmake/EmbedWorkloads.cmake; do not edit.
#include \"${HEADER}\"

namespace dbload {

const std::map<std::string, std::string_view>& ${FUNCTION}() {
  static const auto* const files = new std::map<std::string, std::string_view>{
${body}  };
  return *files;
}

}  // namespace dbload
")
# Only touch the output when it changed, so that nothing rebuilds needlessly.
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")

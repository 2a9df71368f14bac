# The build enforces the layers: a file may include headers of its own folder and of the folders
# whose targets its target links directly (names in target_link_libraries); anything else fails
# the configure step with the file and the include named. Include paths all start from the
# source root and name their folder ("db/driver.h"), so the folder of an include is its first
# component; "dbload/v1/…" is the generated code of proto/.
#
# A folder with more than one target may say which target a header belongs to by listing the
# header among that target's sources: such a header may be included only by files whose target
# links that very target (plan/plan_parser.h needs dbload_plan_parser, and with it yaml-cpp;
# linking dbload_plan alone does not let a file include it). Headers no target lists belong to
# their folder as a whole.
#
# The source root is given to each target here (PRIVATE, or INTERFACE for header-only targets)
# instead of through one global include_directories, so that nothing outside this check decides
# what may see what.

function(_dbload_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _dbload_collect_targets(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# The folder of a target: the first component of its directory below the source root, or of the
# two first for tests/.
function(_dbload_target_folder target out)
  get_target_property(dir ${target} SOURCE_DIR)
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${dir})
  string(REGEX MATCH "^(tests/[^/]+|[^/]+)" folder "${rel}")
  set(${out} ${folder} PARENT_SCOPE)
endfunction()

function(dbload_enforce_layers)
  _dbload_collect_targets(${PROJECT_SOURCE_DIR} targets)
  set(ours "")
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|INTERFACE_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    _dbload_target_folder(${target} folder)
    if(folder MATCHES "^(tests|bench|fuzz)")
      # Tests, benchmarks and fuzzers reach across the layers on purpose (they drive internals);
      # they get the source root but are not held to the layering.
      target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
    else()
      list(APPEND ours ${target})
    endif()
  endforeach()

  # Root include, and the folders each target may include from.
  set(known_folders "")
  foreach(target IN LISTS ours)
    get_target_property(type ${target} TYPE)
    _dbload_target_folder(${target} folder)
    list(APPEND known_folders ${folder})
    if(type STREQUAL "INTERFACE_LIBRARY")
      target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR})
      get_target_property(deps ${target} INTERFACE_LINK_LIBRARIES)
    else()
      target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
      get_target_property(deps ${target} LINK_LIBRARIES)
    endif()
    set(allowed ${folder} ${target})
    foreach(dep IN LISTS deps)
      if(TARGET ${dep} AND dep IN_LIST ours)
        _dbload_target_folder(${dep} dep_folder)
        list(APPEND allowed ${dep_folder} ${dep})
      endif()
    endforeach()
    list(APPEND allowed_in_${folder} ${allowed})
    set(allowed_${target} ${allowed})
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(sources ${target} SOURCES)
      get_target_property(dir ${target} SOURCE_DIR)
      foreach(source IN LISTS sources)
        if(source MATCHES "\\.h$")
          if(NOT IS_ABSOLUTE ${source})
            set(source ${dir}/${source})
          endif()
          file(RELATIVE_PATH header ${PROJECT_SOURCE_DIR} ${source})
          set_property(GLOBAL PROPERTY DBLOAD_HEADER_OWNER_${header} ${target})
        endif()
      endforeach()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES known_folders)

  # Sources are checked against their own target; a folder's headers against what any target of
  # the folder links (a header belongs to the folder's targets together).
  foreach(target IN LISTS ours)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY")
      continue()
    endif()
    get_target_property(sources ${target} SOURCES)
    get_target_property(dir ${target} SOURCE_DIR)
    foreach(source IN LISTS sources)
      if(NOT source MATCHES "\\.cc$")
        continue()
      endif()
      if(NOT IS_ABSOLUTE ${source})
        set(source ${dir}/${source})
      endif()
      if(NOT EXISTS ${source} OR NOT source MATCHES "^${PROJECT_SOURCE_DIR}/")
        continue()  # generated (protobuf, embedded files)
      endif()
      _dbload_check_file(${source} "${allowed_${target}}" "${known_folders}" "target ${target}")
    endforeach()
  endforeach()
  foreach(folder IN LISTS known_folders)
    file(GLOB_RECURSE headers ${PROJECT_SOURCE_DIR}/${folder}/*.h ${PROJECT_SOURCE_DIR}/${folder}/*.inc)
    foreach(header IN LISTS headers)
      _dbload_check_file(${header} "${allowed_in_${folder}}" "${known_folders}" "folder ${folder}/")
    endforeach()
  endforeach()
  get_property(violations GLOBAL PROPERTY DBLOAD_LAYER_VIOLATIONS)
  if(violations)
    list(JOIN violations "\n  " text)
    message(FATAL_ERROR "layering: these includes name a folder (or a target's own header) that "
      "their target does not link (add the target to target_link_libraries, or move the code):"
      "\n  ${text}")
  endif()
endfunction()

function(_dbload_check_file file allowed known_folders who)
  file(STRINGS ${file} includes REGEX "^#include \"[a-z_]+/")
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${file})
  foreach(line IN LISTS includes)
    string(REGEX MATCH "^#include \"(([a-z_]+)/[^\"]+)\"" _ "${line}")
    set(header ${CMAKE_MATCH_1})
    set(folder ${CMAKE_MATCH_2})
    if(folder STREQUAL "dbload")
      set(folder proto)
    endif()
    get_property(owner GLOBAL PROPERTY DBLOAD_HEADER_OWNER_${header})
    if(folder IN_LIST known_folders AND NOT folder IN_LIST allowed)
      set_property(GLOBAL APPEND PROPERTY DBLOAD_LAYER_VIOLATIONS
        "${rel}: ${line} (${who} links no target of ${folder}/)")
    elseif(owner AND NOT owner IN_LIST allowed)
      set_property(GLOBAL APPEND PROPERTY DBLOAD_LAYER_VIOLATIONS
        "${rel}: ${line} (${who} does not link ${owner}, whose header it is)")
    endif()
  endforeach()
endfunction()

# A cache of the module's link, run as its linker launcher (CMAKE_CXX_LINKER_LAUNCHER, CMakeLists.txt):
#
#   cmake -DCACHE_DIR=<dir> -DSALT=<toolchain> -P link_cache.cmake -- <the link command...>
#
# pip builds in a new isolated environment each time, and scikit-build-core then deletes CMakeFiles/
# (the objects) of the build directory it reuses (pyproject.toml's build-dir): every unit comes back
# from ccache with the same bytes, but the link, ~25 s of LTO on 2 cores, would run again. Here the
# link is keyed by its command line and the contents of every file it names (objects, archives,
# libraries, response files and the objects they list) and the toolchain (SALT); a key seen before
# gives back the output it linked then (copied from CACHE_DIR), any other key runs the link and
# stores its output. A changed object, flag or library is a new key, so a stale module is never
# reused. The newest KEEP outputs are kept.
cmake_minimum_required(VERSION 3.21)
if(NOT DEFINED KEEP)
  set(KEEP 3)
endif()

# the link command: the arguments after "--"
set(_cmd "")
set(_after FALSE)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE ${_last})
  if(_after)
    list(APPEND _cmd "${CMAKE_ARGV${_i}}")
  elseif(CMAKE_ARGV${_i} STREQUAL "--")
    set(_after TRUE)
  endif()
endforeach()
if(NOT _cmd)
  message(FATAL_ERROR "link_cache.cmake: no link command after --")
endif()

# the output (-o <file>) and the files the command reads
set(_out "")
set(_inputs "")
set(_next_is_out FALSE)
set(_args ${_cmd})
set(_expanded "")
foreach(_a IN LISTS _args)
  if(_a MATCHES "^@(.+)$" AND EXISTS "${CMAKE_MATCH_1}")  # a response file: its contents are arguments too
    file(READ "${CMAKE_MATCH_1}" _rsp)
    separate_arguments(_rsp NATIVE_COMMAND "${_rsp}")
    list(APPEND _inputs "${CMAKE_MATCH_1}")
    list(APPEND _expanded ${_rsp})
  else()
    list(APPEND _expanded "${_a}")
  endif()
endforeach()
foreach(_a IN LISTS _expanded)
  if(_next_is_out)
    set(_out "${_a}")
    set(_next_is_out FALSE)
  elseif(_a STREQUAL "-o")
    set(_next_is_out TRUE)
  elseif(NOT _a MATCHES "^-" AND EXISTS "${_a}" AND NOT IS_DIRECTORY "${_a}")
    list(APPEND _inputs "${_a}")
  endif()
endforeach()

set(_run_link TRUE)
if(_out AND CACHE_DIR)
  string(SHA256 _key "${SALT}\n${_cmd}")  # (the list's separators keep the arguments apart)
  foreach(_f IN LISTS _inputs)
    file(SHA256 "${_f}" _h)
    string(SHA256 _key "${_key}\n${_f}\n${_h}")
  endforeach()
  get_filename_component(_name "${_out}" NAME)
  set(_entry "${CACHE_DIR}/${_key}/${_name}")
  if(EXISTS "${_entry}")
    file(COPY_FILE "${_entry}" "${_out}")
    file(TOUCH "${CACHE_DIR}/${_key}/used")  # most recently used
    message(STATUS "link_cache: ${_name} from the cache (${_key})")
    set(_run_link FALSE)
  endif()
endif()

if(_run_link)
  execute_process(COMMAND ${_cmd} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    # the linker has said why on stderr; make the launcher fail as the link did
    message(FATAL_ERROR "link_cache: the link failed (${_rc})")
  endif()
  if(_out AND CACHE_DIR AND EXISTS "${_out}")
    # stored under a temporary name, then renamed: a build interrupted here leaves no partial entry
    file(MAKE_DIRECTORY "${CACHE_DIR}/${_key}")
    file(COPY_FILE "${_out}" "${_entry}.tmp")
    file(RENAME "${_entry}.tmp" "${_entry}")
    file(TOUCH "${CACHE_DIR}/${_key}/used")
    # keep the newest KEEP entries (by the time each was last stored or used)
    file(GLOB _entries LIST_DIRECTORIES TRUE "${CACHE_DIR}/*")
    list(REMOVE_ITEM _entries "${CACHE_DIR}/${_key}")  # (never the one just stored)
    list(LENGTH _entries _n)
    while(_n GREATER_EQUAL KEEP)
      set(_oldest "")
      foreach(_e IN LISTS _entries)
        if(NOT _oldest OR "${_oldest}/used" IS_NEWER_THAN "${_e}/used")  # (also when equal, or a stamp missing)
          set(_oldest "${_e}")
        endif()
      endforeach()
      file(REMOVE_RECURSE "${_oldest}")
      list(REMOVE_ITEM _entries "${_oldest}")
      math(EXPR _n "${_n} - 1")
    endwhile()
  endif()
endif()

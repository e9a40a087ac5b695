# SPDX-License-Identifier: GPL-2.0-only
# The version `fsctl --version` prints (FSCTL_VERSION_STRING), decided at
# configure time: in a git checkout, `git describe --tags --always --dirty`
# (a tag such as v0.2.0 gives "0.2.0", "0.2.0-3-gabc1234" after it; with no
# tag the bare commit "abc1234[-dirty]" is prefixed with PROJECT_VERSION);
# otherwise (a source tarball) PROJECT_VERSION. Written to
# ${CMAKE_BINARY_DIR}/generated/cmd/version.h from cmd/version.h.in.
set(FSCTL_VERSION_STRING ${PROJECT_VERSION})
find_package(Git QUIET)
# .git is a directory in a clone and a file in a worktree: EXISTS takes both.
if(GIT_FOUND AND EXISTS ${CMAKE_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --tags --always --dirty
                  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                  OUTPUT_VARIABLE FSCTL_GIT_DESCRIBE OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE FSCTL_GIT_RC ERROR_QUIET)
  # Whether a tag is reachable: without one, describe prints only the commit
  # (which may start with a digit, so its shape does not tell).
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --tags --abbrev=0
                  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                  OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE FSCTL_GIT_NO_TAG)
  if(FSCTL_GIT_RC EQUAL 0 AND FSCTL_GIT_DESCRIBE)
    if(FSCTL_GIT_NO_TAG)
      set(FSCTL_VERSION_STRING ${PROJECT_VERSION}-g${FSCTL_GIT_DESCRIBE})
    elseif(FSCTL_GIT_DESCRIBE MATCHES "^v([0-9].*)$")
      set(FSCTL_VERSION_STRING ${CMAKE_MATCH_1})
    else()
      set(FSCTL_VERSION_STRING ${FSCTL_GIT_DESCRIBE})
    endif()
  endif()
endif()
message(STATUS "fsctl version: ${FSCTL_VERSION_STRING}")
configure_file(${CMAKE_SOURCE_DIR}/cmd/version.h.in ${CMAKE_BINARY_DIR}/generated/cmd/version.h @ONLY)

# SPDX-License-Identifier: GPL-2.0-only
# What `cmake --install` puts under the prefix: the fsctl binary (a system
# administration tool: sbin), its man pages (section 8) and shell
# completions. The static libraries and the test tools (unit_tests,
# tree_torture, chunk_torture, put_item, fuzz targets) are not installed;
# tests/image/006-install checks the list.
install(TARGETS fsctl RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
file(GLOB FSCTL_MAN_PAGES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/man/*.8)
install(FILES ${FSCTL_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
# bash-completion loads completions/NAME on demand; zsh's Debian fpath has
# vendor-completions.
install(FILES ${CMAKE_SOURCE_DIR}/completions/fsctl.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME fsctl)
install(FILES ${CMAKE_SOURCE_DIR}/completions/_fsctl
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)

# `cmake --install build [--prefix P] [--strip]`: the binary in bin/ with the tracer library beside
# it (vramdoc looks for libvramdoc-tracer.so next to itself), the docs, a man page per command and
# the bash / zsh completions, generated from the binary's own --help (scripts/gen_docs.sh).
include(GNUInstallDirs)
install(TARGETS vramdoc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET vramdoc_tracer)
  install(TARGETS vramdoc_tracer LIBRARY DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} PATTERN "results" EXCLUDE)

set(VRAMDOC_GENERATED_DOCS ${CMAKE_BINARY_DIR}/generated/docs)
add_custom_command(OUTPUT ${VRAMDOC_GENERATED_DOCS}/vramdoc.bash
  COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/gen_docs.sh $<TARGET_FILE:vramdoc> ${VRAMDOC_GENERATED_DOCS}
  DEPENDS vramdoc ${CMAKE_SOURCE_DIR}/scripts/gen_docs.sh
  COMMENT "man pages and shell completions from vramdoc's --help")
add_custom_target(vramdoc_docs ALL DEPENDS ${VRAMDOC_GENERATED_DOCS}/vramdoc.bash)
install(DIRECTORY ${VRAMDOC_GENERATED_DOCS}/man1 DESTINATION ${CMAKE_INSTALL_MANDIR})
install(FILES ${VRAMDOC_GENERATED_DOCS}/vramdoc.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME vramdoc)
install(FILES ${VRAMDOC_GENERATED_DOCS}/_vramdoc DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)

# What `cmake --install` puts where (docs/install.md has the table). Two components, one Debian
# package each (cmake/PreflightPackage.cmake):
#   base -> package `preflight`: both programs, configs, Slurm scripts, Kubernetes manifests, man
#           pages, docs;
#   gpu  -> package `preflight-gpu`: the modules that link CUDA, NCCL and MPI (their
#           install(TARGETS ... COMPONENT gpu) rules sit beside the targets) and their docs.
# With CMAKE_INSTALL_PREFIX=/usr (the package) the configuration goes to /etc/preflight, an
# absolute path (GNUInstallDirs' rule for SYSCONFDIR, so `cmake --install --prefix` does not move
# it); with any other configured prefix to <prefix>/etc/preflight.
include(GNUInstallDirs)

set(PREFLIGHT_DATADIR ${CMAKE_INSTALL_DATADIR}/preflight)
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(PREFLIGHT_SYSCONFDIR ${CMAKE_INSTALL_FULL_SYSCONFDIR}/preflight)
else()
  set(PREFLIGHT_SYSCONFDIR ${CMAKE_INSTALL_SYSCONFDIR}/preflight)
endif()

# Both programs in bin/: the controller finds the agent next to itself and the programs find their
# modules in <exe dir>/../lib/preflight/.
install(TARGETS preflight preflight-agent RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT base)

# Configuration (conffiles in the package): a run configuration, the Slurm prolog's settings (all
# commented out: nothing changes until an operator edits it) and the SKU expectations. The exec
# allow-list (/etc/preflight/exec-allow) is deliberately not shipped: its presence changes what
# checks may start (docs/security.md), so a site writes its own.
set(PREFLIGHT_CONFFILES
    ${PREFLIGHT_SYSCONFDIR}/preflight.yaml
    ${PREFLIGHT_SYSCONFDIR}/prolog.env
    ${PREFLIGHT_SYSCONFDIR}/health.env
    ${PREFLIGHT_SYSCONFDIR}/epilog.env)
install(FILES packaging/etc/preflight.yaml packaging/etc/prolog.env packaging/etc/health.env
              packaging/etc/epilog.env
        DESTINATION ${PREFLIGHT_SYSCONFDIR} COMPONENT base)
file(GLOB preflight_skus CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/manifests/skus/*.yaml)
install(FILES ${preflight_skus} DESTINATION ${PREFLIGHT_SYSCONFDIR}/skus COMPONENT base)
foreach(sku IN LISTS preflight_skus)
  get_filename_component(sku_name ${sku} NAME)
  list(APPEND PREFLIGHT_CONFFILES ${PREFLIGHT_SYSCONFDIR}/skus/${sku_name})
endforeach()

# Slurm: the prolog, the health check, the epilog and the job-start wrapper (slurm.conf points at
# the installed paths).
install(PROGRAMS slurm/prolog.sh slurm/healthcheck.sh slurm/epilog.sh slurm/preflight.sbatch
        DESTINATION ${PREFLIGHT_DATADIR}/slurm COMPONENT base)
install(FILES slurm/README.md slurm/health.md DESTINATION ${PREFLIGHT_DATADIR}/slurm COMPONENT base)
# Kubernetes: the kustomize base and examples, and the SKU files (kubectl apply -k works in place).
install(DIRECTORY manifests/ DESTINATION ${PREFLIGHT_DATADIR}/manifests COMPONENT base)
# Operator scripts that work without the source tree, and the report schema.
install(PROGRAMS scripts/tls_make_ca.sh DESTINATION ${PREFLIGHT_DATADIR}/scripts COMPONENT base)
install(FILES docs/report.schema.json DESTINATION ${PREFLIGHT_DATADIR} COMPONENT base)

# Docs. The package's copyright and changelog.Debian.gz live beside them (Debian policy 12.5, 12.7).
set(preflight_docdir ${CMAKE_INSTALL_DATADIR}/doc/preflight)
install(FILES README.md ARCHITECTURE.md docs/install.md docs/kubernetes.md docs/security.md
              docs/scale.md
        DESTINATION ${preflight_docdir} COMPONENT base)
install(FILES docs/gpu.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/preflight-gpu COMPONENT gpu)

# changelog.Debian.gz: one entry for this version, dated by the commit (reproducible), compressed
# with gzip -9n (no name, no time stamp: lintian checks both).
execute_process(COMMAND git log -1 --format=%aD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                OUTPUT_VARIABLE PREFLIGHT_CHANGELOG_DATE OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE preflight_date_result)
if(NOT preflight_date_result EQUAL 0 OR PREFLIGHT_CHANGELOG_DATE STREQUAL "")
  set(PREFLIGHT_CHANGELOG_DATE "Wed, 25 Nov 2026 00:00:00 +0000")
endif()
set(PREFLIGHT_PACKAGE_RELEASE 1 CACHE STRING "Debian revision of the preflight packages")
set(PREFLIGHT_PACKAGE_MAINTAINER "preflight maintainers <maintainers@preflight.dev>"
    CACHE STRING "Maintainer field of the Debian packages")
set(preflight_pkgdoc ${PROJECT_BINARY_DIR}/pkgdoc)
foreach(pkg preflight preflight-gpu)
  set(PREFLIGHT_CHANGELOG_PACKAGE ${pkg})
  configure_file(${PROJECT_SOURCE_DIR}/packaging/changelog.Debian.in
                 ${preflight_pkgdoc}/${pkg}/changelog.Debian @ONLY)
  execute_process(COMMAND gzip -9nf ${preflight_pkgdoc}/${pkg}/changelog.Debian
                  RESULT_VARIABLE preflight_gzip_result)
  if(NOT preflight_gzip_result EQUAL 0)
    message(FATAL_ERROR "gzip -9n of ${pkg}'s changelog.Debian failed")
  endif()
endforeach()
install(FILES packaging/copyright ${preflight_pkgdoc}/preflight/changelog.Debian.gz
        DESTINATION ${preflight_docdir} COMPONENT base)
install(FILES packaging/copyright ${preflight_pkgdoc}/preflight-gpu/changelog.Debian.gz
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/preflight-gpu COMPONENT gpu)

# Man pages, generated from each program's --help (packaging/gen_manpage.sh) by running the built
# programs: off for sanitized and cross builds, where running them at build time is slow or
# impossible; `cmake --install` then installs none.
set(preflight_man_default ON)
if(CMAKE_CROSSCOMPILING OR NOT PREFLIGHT_SANITIZE STREQUAL "OFF")
  set(preflight_man_default OFF)
endif()
option(PREFLIGHT_MAN_PAGES "Generate man pages from --help at build time" ${preflight_man_default})
if(PREFLIGHT_MAN_PAGES)
  set(preflight_man_pages)
  foreach(prog preflight preflight-agent)
    set(page ${PROJECT_BINARY_DIR}/man/${prog}.1.gz)
    add_custom_command(
      OUTPUT ${page}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
      COMMAND bash ${PROJECT_SOURCE_DIR}/packaging/gen_manpage.sh $<TARGET_FILE:${prog}> ${prog}
              ${PROJECT_VERSION} ${page}
      DEPENDS ${prog} ${PROJECT_SOURCE_DIR}/packaging/gen_manpage.sh
      COMMENT "Man page ${prog}.1 from ${prog} --help"
      VERBATIM)
    list(APPEND preflight_man_pages ${page})
  endforeach()
  add_custom_target(preflight_man ALL DEPENDS ${preflight_man_pages})
  install(FILES ${preflight_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT base)
endif()

# --- Installation and the Debian package (docs/packaging.md) ---------------------------------------
# `cmake --install` and `cpack` build nothing: they install spillway and spillway-cli as built,
# so a package never waits for the tests and benchmarks (.ci/package builds the two first).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# The binaries carry the built-in scenarios, the default policy and the sample trace as Qt
# resources (app/cli/CMakeLists.txt); the copies in share/spillway are for users to read, copy
# and pass as files.
install(DIRECTORY resources/policies resources/traces resources/scenarios resources/drills
        DESTINATION ${CMAKE_INSTALL_DATADIR}/spillway)
# Sweeps on a batch engine (docs/scale-out.md): the Slurm task and merge scripts, the
# Kubernetes Indexed Job.
install(PROGRAMS packaging/slurm/sweep.sbatch packaging/slurm/merge.sbatch
        DESTINATION ${CMAKE_INSTALL_DATADIR}/spillway/batch)
install(FILES packaging/kubernetes/sweep-job.yaml packaging/kubernetes/sweep-job-library.yaml DESTINATION ${CMAKE_INSTALL_DATADIR}/spillway/batch)
install(FILES packaging/io.github.spillway.Spillway.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES packaging/spillway.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
install(FILES packaging/io.github.spillway.Spillway.metainfo.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
# Debian's copyright file (machine-readable, Apache-2.0), the changelog and the man pages.
set(SPILLWAY_INSTALL_DOCDIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/spillway)
install(FILES packaging/copyright DESTINATION ${SPILLWAY_INSTALL_DOCDIR})
find_program(HELP2MAN_EXECUTABLE help2man DOC "help2man, for the man pages (Debian: help2man)")
find_program(GZIP_EXECUTABLE gzip REQUIRED)
install(CODE "
  set(SPW_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
  set(SPW_WORK_DIR \"${PROJECT_BINARY_DIR}/packaging\")
  set(SPW_VERSION \"${PROJECT_VERSION}\")
  set(SPW_DOCDIR \"${SPILLWAY_INSTALL_DOCDIR}\")
  set(SPW_MANDIR \"${CMAKE_INSTALL_MANDIR}\")
  set(SPW_HELP2MAN \"${HELP2MAN_EXECUTABLE}\")
  set(SPW_GZIP \"${GZIP_EXECUTABLE}\")
  set(SPW_SPILLWAY \"$<TARGET_FILE:spillway>\")
  set(SPW_SPILLWAY_CLI \"$<TARGET_FILE:spillway-cli>\")
  include(\"${PROJECT_SOURCE_DIR}/packaging/install-generated.cmake\")")

# Debian package: `cpack -G DEB` in a build tree where spillway and spillway-cli are built
# (.ci/package builds, packages, lints, installs and runs it). A native package: version
# ${PROJECT_VERSION}, whose latest packaging/changelog entry must match.
set(CPACK_PACKAGE_NAME "spillway")
set(CPACK_PACKAGE_VENDOR "The Spillway Authors")
set(CPACK_PACKAGE_CONTACT "Spillway Maintainers <maintainers@spillway.dev>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "resilience console for the circuit breakers of an AI gateway")
set(CPACK_PACKAGE_DESCRIPTION_FILE "${PROJECT_SOURCE_DIR}/packaging/description.txt")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/spillway/spillway")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_RPM_PACKAGE_LICENSE "Apache-2.0")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_PACKAGE_SECTION "net")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${CPACK_PACKAGE_HOMEPAGE_URL}")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends: from the binaries (dpkg-shlibdeps, dpkg-dev)
# The console draws 误伤 and other Chinese terms of the seeds: a CJK font, else boxes.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "fonts-wqy-microhei | fonts-noto-cjk")
# Stripped binaries; their debug info goes to spillway-dbgsym (a .ddeb, by build id).
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
# ... completed as debhelper would: md5sums relative to the root, usr/share/doc link (CMake 3.25).
set(CPACK_POST_BUILD_SCRIPTS "${PROJECT_SOURCE_DIR}/packaging/fix-dbgsym.cmake")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)

# The Debian package (issue 35): `cpack -G DEB` in the build directory makes
# jig_<version>_<arch>.deb holding everything `cmake --install` puts under
# /usr: jig, jig-snapshot, the module SDK and the snapshot, signed at
# package time with JIG_SIGNING_KEY (the development key unless the
# distributor configured their own; docs/distributors.md).
set(JIG_DEB_MAINTAINER "jig maintainers <jig@localhost.invalid>" CACHE STRING
  "The Debian package's Maintainer field (a distributor puts their own)")
set(JIG_DEB_VERSION "${PROJECT_VERSION}")

# /usr/share/doc/jig: copyright and a native package's changelog.gz (gzip -n:
# no name or time stamp, so the bytes are reproducible).
configure_file(packaging/debian/changelog.in "${CMAKE_BINARY_DIR}/packaging/changelog" @ONLY)
add_custom_command(OUTPUT "${CMAKE_BINARY_DIR}/packaging/changelog.gz"
  COMMAND gzip -9nf -k "${CMAKE_BINARY_DIR}/packaging/changelog"
  DEPENDS "${CMAKE_BINARY_DIR}/packaging/changelog")
add_custom_target(deb-changelog ALL DEPENDS "${CMAKE_BINARY_DIR}/packaging/changelog.gz")
install(FILES packaging/debian/copyright "${CMAKE_BINARY_DIR}/packaging/changelog.gz"
  DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/jig" COMPONENT doc)
# What lintian reports as errors and jig does on purpose, each with its
# reason (decision 175).
install(FILES packaging/debian/lintian-overrides DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides"
  RENAME jig COMPONENT doc)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME jig)
set(CPACK_PACKAGE_VERSION "${JIG_DEB_VERSION}")
set(CPACK_PACKAGE_CONTACT "${JIG_DEB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${JIG_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Shared libraries from dpkg-shlibdeps; the programs jig runs by path:
# Bubblewrap (JIG_BWRAP_PATH) always, systemd-run for the delegated cgroup
# when the session has no delegated cgroup of its own (docs/scope-policy.md).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "bubblewrap")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "systemd, dbus-user-session")
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
# Strip the programs and modules as they are installed (CMAKE_INSTALL_DO_STRIP),
# so before the snapshot is made and signed from the installed bytes; the
# build tree keeps the unstripped files for debuggers.
set(CPACK_STRIP_FILES TRUE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "runs untrusted JavaScript Flows in real containment")
# CPack puts the summary above this text as the synopsis.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "jig runs small automation programs (Flows, JavaScript or TypeScript packages
on a pinned Bun runtime) that nobody has to trust. The operator reviews a
project, approves a Plan that lists every grant, and jig runs the Flow inside
Bubblewrap, a rootless cgroup v2 leaf and a seccomp filter, with no
capabilities. Every backend is a module loaded from an installed, signed
snapshot; jig refuses a snapshot whose bytes disagree with its signature.
.
This package holds jig, jig-snapshot, the module SDK (headers, linker
version script, CMake package) and the signed snapshot.")
include(CPack)

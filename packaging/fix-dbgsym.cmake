# CPACK_POST_BUILD_SCRIPTS: completes the spillway-dbgsym .ddeb that CPack's DEB generator makes
# (CPACK_DEBIAN_DEBUGINFO_PACKAGE) the way debhelper makes a dbgsym package. CMake 3.25 writes
#   - DEBIAN/md5sums with the staging directory's absolute paths instead of paths relative to the
#     package root (lintian: md5sums-lists-nonexistent-file, file-missing-in-md5sums; dpkg
#     --verify cannot check the files);
#   - the detached debug files executable (0755);
#   - no /usr/share/doc/spillway-dbgsym (lintian: no-copyright-file, no-changelog); debhelper makes
#     it a symbolic link to the doc directory of the package it strictly depends on (spillway).
# This repacks the .ddeb with the debug files 0644, md5sums of every file relative to the root and
# that link; with a CPack that gets these right, it changes nothing but the compression. Needs dpkg-deb (dpkg) and md5sum.

foreach(ddeb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT ddeb MATCHES "-dbgsym_[^/]*\\.ddeb$")
    continue()
  endif()
  get_filename_component(name "${ddeb}" NAME)
  set(root "${CPACK_TOPLEVEL_DIRECTORY}/fix-dbgsym/root")
  file(REMOVE_RECURSE "${CPACK_TOPLEVEL_DIRECTORY}/fix-dbgsym")
  file(MAKE_DIRECTORY "${root}")
  execute_process(COMMAND dpkg-deb --raw-extract "${ddeb}" "${root}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb --raw-extract ${name} failed (${rc})")
  endif()
  # The package it debugs: Depends: spillway (= VERSION).
  file(STRINGS "${root}/DEBIAN/control" depends REGEX "^Depends: ")
  if(NOT depends MATCHES "^Depends: ([a-z0-9.+-]+) \\(= [^)]+\\)$")
    message(FATAL_ERROR "${name}: expected 'Depends: PACKAGE (= VERSION)', got '${depends}'")
  endif()
  set(package "${CMAKE_MATCH_1}")
  file(STRINGS "${root}/DEBIAN/control" self REGEX "^Package: ")
  string(REGEX REPLACE "^Package: " "" self "${self}")
  set(doc "${root}/usr/share/doc/${self}")
  if(NOT EXISTS "${doc}" AND NOT IS_SYMLINK "${doc}")
    file(MAKE_DIRECTORY "${root}/usr/share/doc")
    file(CREATE_LINK "${package}" "${doc}" SYMBOLIC)
  endif()
  # The detached debug files are data, not programs: 0644, as dh_strip leaves them.
  file(GLOB_RECURSE debug_files LIST_DIRECTORIES false "${root}/usr/lib/debug/*.debug")
  foreach(file IN LISTS debug_files)
    file(CHMOD "${file}" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  endforeach()
  # md5sums: every regular file under the root, relative to it, sorted.
  file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${root}" "${root}/*")
  list(FILTER files EXCLUDE REGEX "^DEBIAN/")
  list(SORT files)
  set(md5sums "")
  foreach(file IN LISTS files)
    if(IS_SYMLINK "${root}/${file}")
      continue()
    endif()
    file(MD5 "${root}/${file}" sum)
    string(APPEND md5sums "${sum}  ${file}\n")
  endforeach()
  file(WRITE "${root}/DEBIAN/md5sums" "${md5sums}")
  file(CHMOD "${root}/DEBIAN/md5sums" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  execute_process(COMMAND dpkg-deb --root-owner-group --build "${root}" "${ddeb}"
                  OUTPUT_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb --build ${name} failed (${rc})")
  endif()
  file(REMOVE_RECURSE "${CPACK_TOPLEVEL_DIRECTORY}/fix-dbgsym")
  message(STATUS "${name}: md5sums relative to the root, /usr/share/doc/${self} -> ${package}")
endforeach()

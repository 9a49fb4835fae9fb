# ctest's fixture test_dirs (tests/CMakeLists.txt): empties DIR, then creates
# DIR/<name>/cache and DIR/<name>/tmp for each name in NAMES (comma-separated).
if(NOT DIR OR NOT NAMES)
  message(FATAL_ERROR "fresh_test_dirs.cmake needs -DDIR=... -DNAMES=a,b,...")
endif()
file(REMOVE_RECURSE ${DIR})
string(REPLACE "," ";" names "${NAMES}")
foreach(name ${names})
  file(MAKE_DIRECTORY ${DIR}/${name}/cache ${DIR}/${name}/tmp)
endforeach()

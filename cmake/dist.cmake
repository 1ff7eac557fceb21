# orcu as a distribution library: symbol versions, manual pages, the
# installed tools.  Included at the end of the top CMakeLists.txt, once
# every target exists.  docs/ABI.md says what each part promises.

# Symbol versions (abi/*.map): every exported orcu_* name carries a node.
# The liburcu shim (compat/urcu-shim) gets none: liburcu's own libraries
# have none, and a program built against the shim must keep running on
# the real liburcu.
foreach(pair "orcu|liborcu" "orcu-urcu|liborcu-urcu")
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 lib)
  list(GET pair 1 map)
  if(TARGET ${lib})
    set(map ${PROJECT_SOURCE_DIR}/abi/${map}.map)
    target_link_options(${lib} PRIVATE "LINKER:--version-script=${map}")
    set_property(TARGET ${lib} APPEND PROPERTY LINK_DEPENDS ${map})
  endif()
endforeach()

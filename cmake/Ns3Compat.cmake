# Debian's ns-3.37 exports ns3::libcore-style targets; newer ns-3 exports ns3::core.
# Provide fabricsim::ns3-<name> aliases that work with either.
find_package(ns3 3.37 REQUIRED)
foreach(mod core network)
  add_library(fabricsim_ns3_${mod} INTERFACE)
  if(TARGET ns3::lib${mod})
    target_link_libraries(fabricsim_ns3_${mod} INTERFACE ns3::lib${mod})
  elseif(TARGET ns3::${mod})
    target_link_libraries(fabricsim_ns3_${mod} INTERFACE ns3::${mod})
  else()
    message(FATAL_ERROR "ns-3 module '${mod}' not found (neither ns3::lib${mod} nor ns3::${mod})")
  endif()
endforeach()

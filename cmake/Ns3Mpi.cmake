# The MPI build (FABRICSIM_MPI=ON, set up by `scripts/setup mpi`): ns-3's distributed engine
# (DistributedSimulatorImpl, NullMessageSimulatorImpl) for one run across ranks. Debian's ns-3
# binary packages lack the `mpi` module, so it is built here as library ns3-mpi from src/mpi of
# Debian's source package of the same ns-3 (scripts/fetch-ns3-mpi-source), against the installed
# core and network. Everything else is the same build as without MPI: the option only adds targets.
option(FABRICSIM_MPI "Build ns-3's mpi module and fabricsim-mpi (scripts/setup mpi)" OFF)
set(FABRICSIM_NS3_MPI_SOURCE ${CMAKE_BINARY_DIR}/ns3-mpi-source
    CACHE PATH "ns-3's src/mpi as fetched by scripts/fetch-ns3-mpi-source")

if(FABRICSIM_MPI)
  set(mpi_src ${FABRICSIM_NS3_MPI_SOURCE}/src/mpi/model)
  if(NOT EXISTS ${mpi_src}/distributed-simulator-impl.cc)
    message(FATAL_ERROR "FABRICSIM_MPI: ns-3's mpi sources not found in ${mpi_src}; "
                        "run scripts/fetch-ns3-mpi-source ${FABRICSIM_NS3_MPI_SOURCE} (or scripts/setup mpi)")
  endif()
  find_package(MPI REQUIRED COMPONENTS CXX)
  add_library(ns3-mpi SHARED
      ${mpi_src}/distributed-simulator-impl.cc
      ${mpi_src}/granted-time-window-mpi-interface.cc
      ${mpi_src}/mpi-interface.cc
      ${mpi_src}/mpi-receiver.cc
      ${mpi_src}/null-message-mpi-interface.cc
      ${mpi_src}/null-message-simulator-impl.cc
      ${mpi_src}/remote-channel-bundle-manager.cc
      ${mpi_src}/remote-channel-bundle.cc)
  # Its public headers as <ns3/...>, as an ns-3 install would have them.
  foreach(h mpi-interface.h mpi-receiver.h parallel-communication-interface.h)
    configure_file(${mpi_src}/${h} ${FABRICSIM_INCLUDE_DIR}/ns3/${h} COPYONLY)
  endforeach()
  target_include_directories(ns3-mpi PUBLIC ${FABRICSIM_INCLUDE_DIR} PRIVATE ${mpi_src})
  target_link_libraries(ns3-mpi PUBLIC fabricsim_ns3_core fabricsim_ns3_network MPI::MPI_CXX)
endif()

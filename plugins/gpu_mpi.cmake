# GPU, MPI and nccl-tests checks, included from plugins/CMakeLists.txt. Sources whose
# dependency was not found are left out, and the configure step says so.
target_sources(preflight_plugins PRIVATE
  collective/mpi_world.cpp
  collective/nccl_allreduce_spec.cpp
  collective/nccl_debug_capture.cpp
  collective/nccl_net_judge.cpp
  collective/nccl_net_usage.cpp
  collective/nccl_rendezvous.cpp
  collective/step_watchdog.cpp
  exec/nccl_tests.cpp
  exec/nccl_tests_json.cpp
  exec/nccl_tests_judge.cpp
  exec/nccl_tests_probe.cpp
  exec/nccl_tests_text.cpp
  gpu/inventory.cpp
  gpu/nvml_loader.cpp
)
target_link_libraries(preflight_plugins PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)

set(_pf_left_out "")
if(PREFLIGHT_WITH_CUDA)
  target_sources(preflight_plugins PRIVATE gpu/inventory_cuda.cpp)
  # The runtime is linked statically so an agent needs only the driver (libcuda) at run time.
  target_link_libraries(preflight_plugins PRIVATE CUDA::cudart_static)
  target_compile_definitions(preflight_plugins PUBLIC PREFLIGHT_WITH_CUDA=1)
else()
  list(APPEND _pf_left_out "gpu.inventory (PREFLIGHT_WITH_CUDA=OFF)")
endif()
if(PREFLIGHT_WITH_NCCL)
  target_sources(preflight_plugins PRIVATE collective/nccl_allreduce.cpp collective/nccl_local_ranks.cpp)
  target_include_directories(preflight_plugins PRIVATE ${PREFLIGHT_NCCL_INCLUDE_DIR})
  target_link_libraries(preflight_plugins PRIVATE ${PREFLIGHT_NCCL_LIBRARY})
  target_compile_definitions(preflight_plugins PUBLIC PREFLIGHT_WITH_NCCL=1)
else()
  list(APPEND _pf_left_out "collective.nccl_allreduce[_local] (PREFLIGHT_WITH_NCCL=OFF)")
endif()
if(PREFLIGHT_WITH_MPI)
  target_sources(preflight_plugins PRIVATE collective/mpi_allreduce.cpp)
  target_link_libraries(preflight_plugins PUBLIC MPI::MPI_CXX)
  target_compile_definitions(preflight_plugins PUBLIC PREFLIGHT_WITH_MPI=1)
else()
  list(APPEND _pf_left_out "collective.mpi_allreduce and --bootstrap mpi (PREFLIGHT_WITH_MPI=OFF)")
endif()
if(_pf_left_out)
  string(REPLACE ";" ", " _pf_left_out "${_pf_left_out}")
  message(STATUS "preflight: left out of this build: ${_pf_left_out}")
endif()

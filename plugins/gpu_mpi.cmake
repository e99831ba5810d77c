# GPU, MPI and nccl-tests checks, included from plugins/CMakeLists.txt. Sources whose
# dependency was not found are left out, and the configure step says so.
#
# The binaries link none of the GPU or MPI libraries. What calls them is in two modules,
# libpreflight-gpu.so (CUDA runtime, linked statically; libnccl.so.2 opened on demand) and libpreflight-mpi.so
# (libmpi), built into ${PROJECT_BINARY_DIR}/lib/preflight and installed to lib/preflight (the
# preflight-gpu package); plugins/modules/module_loader.hpp loads them on first use. The
# binaries need only the CUDA and NCCL headers, for types.
target_sources(preflight_plugins PRIVATE
  collective/mpi_world.cpp
  collective/nccl_allreduce_spec.cpp
  collective/nccl_debug_capture.cpp
  collective/nccl_log_lines.cpp
  collective/nccl_net_judge.cpp
  collective/nccl_net_usage.cpp
  collective/nccl_rendezvous.cpp
  collective/step_watchdog.cpp
  exec/dcgm_diag.cpp
  exec/dcgm_diag_json.cpp
  exec/dcgm_diag_judge.cpp
  exec/dcgm_diag_text.cpp
  exec/nccl_tests.cpp
  exec/nccl_tests_json.cpp
  exec/nccl_tests_judge.cpp
  exec/nccl_tests_probe.cpp
  exec/nccl_tests_reading.cpp
  exec/nccl_tests_text.cpp
  gpu/compute_judge.cpp
  gpu/health.cpp
  gpu/health_judge.cpp
  gpu/health_nvlink.cpp
  gpu/inventory.cpp
  gpu/nvml_health.cpp
  gpu/nvml_loader.cpp
  gpu/xid.cpp
  gpu/xid_catalog.cpp
  gpu/xid_judge.cpp
  gpu/xid_log.cpp
  modules/module_loader.cpp
)
target_link_libraries(preflight_plugins PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)

set(PREFLIGHT_MODULE_DIR ${PROJECT_BINARY_DIR}/lib/preflight)
function(preflight_module target file)
  add_library(${target} MODULE ${file})
  # No build RUNPATH: the libraries a module needs are found as for any program (a RUNPATH with an
  # empty entry would make the loader try the current directory).
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PREFLIGHT_MODULE_DIR}
                        CXX_VISIBILITY_PRESET hidden POSITION_INDEPENDENT_CODE ON
                        SKIP_BUILD_RPATH ON)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${target} PRIVATE PREFLIGHT_VERSION="${PROJECT_VERSION}")
  target_link_libraries(${target} PRIVATE preflight_warnings)
  # Only the libraries the module calls become its dependencies (MPI::MPI_CXX brings libmpi_cxx).
  target_link_options(${target} PRIVATE -Wl,--as-needed)
  # Built with the binaries, so that a build tree (and its tests) always has its modules.
  add_dependencies(preflight_plugins ${target})
  install(TARGETS ${target} LIBRARY DESTINATION lib/preflight COMPONENT gpu)
endfunction()

set(_pf_left_out "")
if(PREFLIGHT_WITH_CUDA)
  target_sources(preflight_plugins PRIVATE gpu/inventory_cuda.cpp gpu/gpu_runtime.cpp gpu/compute.cpp)
  target_include_directories(preflight_plugins PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(preflight_plugins PUBLIC PREFLIGHT_WITH_CUDA=1)
  preflight_module(preflight_gpu_module modules/gpu_module.cpp)
  target_sources(preflight_gpu_module PRIVATE modules/gpu_compute.cpp modules/gpu_compute_gemm.cpp)
  set_target_properties(preflight_gpu_module PROPERTIES OUTPUT_NAME preflight-gpu)
  # gpu.compute's GEMM opens cuBLASLt itself (dlopen), like NCCL: the module loads without it.
  target_link_libraries(preflight_gpu_module PRIVATE ${CMAKE_DL_LIBS})
  target_compile_definitions(preflight_gpu_module PRIVATE
                             PREFLIGHT_CUBLASLT_FALLBACK="${CUDAToolkit_LIBRARY_DIR}/libcublasLt.so.13")
  # The runtime is linked statically so a node needs only the driver (libcuda) at run time.
  target_link_libraries(preflight_gpu_module PRIVATE CUDA::cudart_static)
else()
  list(APPEND _pf_left_out "gpu.inventory, gpu.compute (PREFLIGHT_WITH_CUDA=OFF)")
endif()
if(PREFLIGHT_WITH_NCCL)
  target_sources(preflight_plugins PRIVATE collective/nccl_allreduce.cpp collective/nccl_local_ranks.cpp
                                           collective/nccl_measure.cpp)
  target_include_directories(preflight_plugins PUBLIC ${PREFLIGHT_NCCL_INCLUDE_DIR})
  target_compile_definitions(preflight_plugins PUBLIC PREFLIGHT_WITH_NCCL=1)
  target_include_directories(preflight_gpu_module PRIVATE ${PREFLIGHT_NCCL_INCLUDE_DIR})
  target_compile_definitions(preflight_gpu_module PRIVATE PREFLIGHT_WITH_NCCL=1)
  # NCCL is opened by the module itself when an NCCL check asks (dlopen): not linked, so the CUDA
  # part loads on a node without it. Its headers give the types.
  target_link_libraries(preflight_gpu_module PRIVATE ${CMAKE_DL_LIBS})
  get_filename_component(_pf_nccl_dir ${PREFLIGHT_NCCL_LIBRARY} DIRECTORY)
  target_compile_definitions(preflight_gpu_module PRIVATE
                             PREFLIGHT_NCCL_FALLBACK="${_pf_nccl_dir}/libnccl.so.2")
else()
  list(APPEND _pf_left_out "collective.nccl_allreduce[_local] (PREFLIGHT_WITH_NCCL=OFF)")
endif()
if(PREFLIGHT_WITH_MPI)
  target_sources(preflight_plugins PRIVATE collective/mpi_allreduce.cpp collective/mpi_runtime.cpp)
  target_compile_definitions(preflight_plugins PUBLIC PREFLIGHT_WITH_MPI=1)
  preflight_module(preflight_mpi_module modules/mpi_module.cpp)
  set_target_properties(preflight_mpi_module PROPERTIES OUTPUT_NAME preflight-mpi)
  target_link_libraries(preflight_mpi_module PRIVATE MPI::MPI_CXX)
  # The C API only: without these mpi.h pulls in the deprecated C++ bindings (libmpi_cxx).
  target_compile_definitions(preflight_mpi_module PRIVATE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
else()
  list(APPEND _pf_left_out "collective.mpi_allreduce and --bootstrap mpi (PREFLIGHT_WITH_MPI=OFF)")
endif()
if(_pf_left_out)
  string(REPLACE ";" ", " _pf_left_out "${_pf_left_out}")
  message(STATUS "preflight: left out of this build: ${_pf_left_out}")
endif()

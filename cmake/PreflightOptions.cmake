# Feature options. Each defaults to ON when its dependency is found, so a plain `cmake -S . -B build`
# builds everything this machine can build; forcing an option ON without the dependency is an error.
option(PREFLIGHT_BUILD_TESTS "Build the GoogleTest suites" ON)
option(PREFLIGHT_SANITIZE "Build with AddressSanitizer and UBSan" OFF)

find_package(Gloo CONFIG QUIET)
find_package(MPI QUIET COMPONENTS CXX)
find_package(CUDAToolkit QUIET HINTS /usr/local/cuda)
find_path(PREFLIGHT_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
find_library(PREFLIGHT_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64
             /usr/local/cuda/lib)

set(_gloo_default OFF)
if(Gloo_FOUND)
  set(_gloo_default ON)
endif()
set(_mpi_default OFF)
if(MPI_CXX_FOUND)
  set(_mpi_default ON)
endif()
set(_cuda_default OFF)
if(CUDAToolkit_FOUND)
  set(_cuda_default ON)
endif()
set(_nccl_default OFF)
if(CUDAToolkit_FOUND AND PREFLIGHT_NCCL_INCLUDE_DIR AND PREFLIGHT_NCCL_LIBRARY)
  set(_nccl_default ON)
endif()

option(PREFLIGHT_WITH_GLOO "Build the Gloo all-reduce check" ${_gloo_default})
option(PREFLIGHT_WITH_MPI "Build the MPI bootstrap and all-reduce check" ${_mpi_default})
option(PREFLIGHT_WITH_CUDA "Build the CUDA GPU checks" ${_cuda_default})
option(PREFLIGHT_WITH_NCCL "Build the NCCL all-reduce check" ${_nccl_default})

if(PREFLIGHT_WITH_GLOO AND NOT Gloo_FOUND)
  message(FATAL_ERROR "PREFLIGHT_WITH_GLOO=ON but Gloo was not found (apt-get install libgloo-dev)")
endif()
if(PREFLIGHT_WITH_MPI AND NOT MPI_CXX_FOUND)
  message(FATAL_ERROR "PREFLIGHT_WITH_MPI=ON but MPI was not found (apt-get install libopenmpi-dev)")
endif()
if(PREFLIGHT_WITH_NCCL AND NOT PREFLIGHT_WITH_CUDA)
  message(FATAL_ERROR "PREFLIGHT_WITH_NCCL=ON needs PREFLIGHT_WITH_CUDA=ON")
endif()
if(PREFLIGHT_WITH_CUDA AND NOT CUDAToolkit_FOUND)
  message(FATAL_ERROR "PREFLIGHT_WITH_CUDA=ON but no CUDA toolkit was found under /usr/local/cuda")
endif()

message(STATUS "preflight: GLOO=${PREFLIGHT_WITH_GLOO} MPI=${PREFLIGHT_WITH_MPI} "
               "CUDA=${PREFLIGHT_WITH_CUDA} NCCL=${PREFLIGHT_WITH_NCCL}")

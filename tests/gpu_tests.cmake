# GPU-path tests, included from tests/CMakeLists.txt. tests/unit/gpu/*_test.cpp carry
# the `gpu` label and skip with the reason when no device is usable; the fake NVML library lets
# the dlopen loader be tested here.
add_library(fake_nvml SHARED unit/gpu/fake_nvml.cpp unit/gpu/fake_nvml_smi.cpp)
set_target_properties(fake_nvml PROPERTIES OUTPUT_NAME fake-nvidia-ml)
foreach(t gpu_inventory_test gpu_health_test)
  target_compile_definitions(${t} PRIVATE PREFLIGHT_FAKE_NVML="$<TARGET_FILE:fake_nvml>")
  add_dependencies(${t} fake_nvml)
endforeach()
# gpu.health's findings are also checked against the reason table they are classified by.
target_link_libraries(gpu_health_test PRIVATE preflight_outcome ${CMAKE_DL_LIBS})

# Built only with CUDA: they call the CUDA runtime directly.
set(gpu_tests "")
if(PREFLIGHT_WITH_CUDA)
  file(GLOB gpu_tests CONFIGURE_DEPENDS unit/gpu/*_test.cpp)
endif()
foreach(t ${gpu_tests})
  preflight_add_test(${t} gpu preflight_agent preflight_plugins)
endforeach()
if(NOT PREFLIGHT_WITH_CUDA)
  # Without the CUDA toolkit the GPU tests cannot be built; each is still listed, and skipped
  # with the reason (CTest's SKIP_RETURN_CODE), rather than vanishing from the list.
  file(GLOB gpu_test_sources CONFIGURE_DEPENDS unit/gpu/*_test.cpp)
  foreach(t ${gpu_test_sources})
    get_filename_component(name ${t} NAME_WE)
    add_test(NAME gpu.${name}
             COMMAND sh -c "echo 'skipped: built without CUDA (PREFLIGHT_WITH_CUDA=OFF: no CUDA toolkit at configure time), so ${name} was not built'; exit 77")
    set_tests_properties(gpu.${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  endforeach()
endif()
if(PREFLIGHT_WITH_CUDA)
  # These tests ask the CUDA runtime themselves whether a device is usable.
  target_link_libraries(nccl_allreduce_test PRIVATE CUDA::cudart_static)
  target_link_libraries(nccl_allreduce_gpu_test PRIVATE CUDA::cudart_static)
endif()
if(PREFLIGHT_WITH_CUDA AND TARGET gpu_skip_agent_test)
  target_link_libraries(gpu_skip_agent_test PRIVATE CUDA::cudart_static)
endif()
# exec.dcgm_diag's findings (dcgm_diag_test, in plugins_unit_tests) are checked against the
# reason table too.
target_link_libraries(plugins_unit_tests PRIVATE preflight_outcome)
target_link_libraries(gpu_compute_judge_test PRIVATE preflight_outcome)
if(PREFLIGHT_WITH_CUDA)
  # The peers scripts/gpu-check.sh measures gpu.compute against (cuBLAS's own GEMM, cudaMemcpy
  # loops): a program, not a test; it runs only on a GPU machine.
  add_executable(gpu_peer_bench unit/gpu/gpu_peer_bench.cpp)
  target_link_libraries(gpu_peer_bench PRIVATE CUDA::cublas CUDA::cudart preflight_warnings)
endif()

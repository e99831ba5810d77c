# Debian packages with CPack (scripts/package.sh runs `cpack -G DEB`): one package per install
# component of cmake/PreflightInstall.cmake.
#   preflight      (component base): the controller, the agent with its CPU checks, configs,
#                  scripts, manifests, man pages; Depends computed by dpkg-shlibdeps.
#   preflight-gpu  (component gpu): the modules that link CUDA, NCCL and MPI; Depends on the same
#                  version of preflight plus what dpkg-shlibdeps finds (libopenmpi3, ...).
# Nothing here names a shared library by hand: the binaries decide, so a library the programs stop
# linking drops out of Depends by itself.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME preflight)
set(CPACK_PACKAGE_VENDOR "preflight")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${PREFLIGHT_PACKAGE_MAINTAINER}")
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it before each package's own synopsis.
set(CPACK_PACKAGE_INSTALL_DIRECTORY preflight)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_OUTPUT_FILE_PREFIX ${PROJECT_BINARY_DIR}/pkg)
# lintian refuses unstripped ELF files in a package (unstripped-binary-or-object).
set(CPACK_STRIP_FILES ON)
# Directories 0755 whatever the umask of the machine that builds the package.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL base gpu)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # NAME_VERSION-RELEASE_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE ${PREFLIGHT_PACKAGE_RELEASE})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${PREFLIGHT_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# CPack runs dpkg-shlibdeps with --ignore-missing-info for every library; scripts/package.sh
# narrows that back down: it fails unless the only libraries no package provides are the NVIDIA
# ones named there (libnccl.so.2 from the CUDA install, the driver's libcuda/libnvidia-ml).
# The NCCL library's directory is searched too, so that dpkg-shlibdeps finds it at all.
if(PREFLIGHT_NCCL_LIBRARY)
  get_filename_component(preflight_nccl_dir ${PREFLIGHT_NCCL_LIBRARY} DIRECTORY)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${preflight_nccl_dir})
endif()
# dpkg --verify and debsums read the md5sums control file.
set(CPACK_DEBIAN_PACKAGE_GENERATE_MD5SUMS ON)  # no-op before CMake 3.30 (CPack always writes it)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(preflight_full_version "${PROJECT_VERSION}-${PREFLIGHT_PACKAGE_RELEASE}")

# preflight: what every node and the controller host need.
set(CPACK_DEBIAN_BASE_PACKAGE_NAME preflight)
set(CPACK_DEBIAN_BASE_FILE_NAME DEB-DEFAULT)
string(CONCAT CPACK_DEBIAN_BASE_DESCRIPTION
    "GPU cluster pre-flight validation: controller and node agent\n"
    "preflight starts an agent on every candidate node before a large job,\n"
    "runs node-local link checks (netdev, InfiniBand, PCIe, RoCE, pause\n"
    "counters) and collective bandwidth tests (Gloo all-reduce) in a few\n"
    "rounds, flags the nodes under 90% of their cohort's median bus bandwidth,\n"
    "confirms each suspect with good partners, and plans Slurm drains or\n"
    "Kubernetes taints for the bad ones, applied only with --apply.\n"
    "This package holds the controller (preflight), the agent\n"
    "(preflight-agent) with its CPU checks, configuration and SKU files in\n"
    "/etc/preflight, the Slurm prolog and job-start wrapper and the Kubernetes\n"
    "manifests in /usr/share/preflight. The NCCL, CUDA and MPI checks are in\n"
    "preflight-gpu.")
set(CPACK_DEBIAN_BASE_PACKAGE_SECTION admin)
# ip: inventories with network namespaces (the local launcher starts agents in them); scontrol and
# srun: the Slurm launcher, drains and the prolog. Neither is linked, so shlibdeps cannot see them.
# The demo and its fabric (preflight-testbed) are not packaged (docs/install.md).
set(CPACK_DEBIAN_BASE_PACKAGE_RECOMMENDS "iproute2, openssl")  # ip netns, tls_make_ca.sh
set(CPACK_DEBIAN_BASE_PACKAGE_SUGGESTS "slurm-client")
# The conffiles list: every file installed under /etc/preflight.
string(REPLACE ";" "\n" preflight_conffiles "${PREFLIGHT_CONFFILES}")
file(WRITE ${PROJECT_BINARY_DIR}/pkgctl/base/conffiles "${preflight_conffiles}\n")
set(CPACK_DEBIAN_BASE_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/pkgctl/base/conffiles)

# preflight-gpu: the GPU and MPI checks, on nodes that have them.
set(CPACK_DEBIAN_GPU_PACKAGE_NAME preflight-gpu)
set(CPACK_DEBIAN_GPU_FILE_NAME DEB-DEFAULT)
string(CONCAT CPACK_DEBIAN_GPU_DESCRIPTION
    "GPU cluster pre-flight validation: NCCL, CUDA and MPI checks\n"
    "The modules preflight-agent loads for its GPU checks (GPU inventory,\n"
    "NCCL all-reduce within a node and across nodes) and its MPI all-reduce\n"
    "check. Without this package those checks report skip and name what is\n"
    "missing.\n"
    "NCCL comes from NVIDIA (package libnccl2 in NVIDIA's repository, or a\n"
    "CUDA install that provides libnccl.so.2); the CUDA runtime is linked in\n"
    "statically and the driver's libcuda is loaded at run time.")
set(CPACK_DEBIAN_GPU_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_GPU_PACKAGE_DEPENDS "preflight (= ${preflight_full_version})")
# libnccl2 is NVIDIA's package name for libnccl.so.2 (their CUDA repository, not Debian's): a
# Recommends, so that apt installs it where that repository is configured and the package still
# installs where NCCL comes from a CUDA tree under /usr/local/cuda instead.
set(CPACK_DEBIAN_GPU_PACKAGE_RECOMMENDS "libnccl2")

include(CPack)
cpack_add_component(base DISPLAY_NAME "preflight" REQUIRED)
cpack_add_component(gpu DISPLAY_NAME "preflight GPU checks" DEPENDS base)

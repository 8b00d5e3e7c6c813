# Build provenance: every build step regenerates provenance.cpp from the current sources,
# git state and variant flags; the file is only replaced when its content changed, so an
# unchanged tree does not relink, and a changed source always yields a new source hash.
set(CUZK_PROVENANCE_CPP ${CMAKE_BINARY_DIR}/generated/provenance.cpp)
set(CUZK_NVCC_VERSION "")
if(CMAKE_CUDA_COMPILER_VERSION)
  set(CUZK_NVCC_VERSION ${CMAKE_CUDA_COMPILER_VERSION})
endif()
set(_flags
  "CUZK_PINNED_HOST=${CUZK_PINNED_HOST};CUZK_SMALLVEC=${CUZK_SMALLVEC};CUZK_SMALLVEC_CAPACITY=${CUZK_SMALLVEC_CAPACITY};CUZK_PRESIZE=${CUZK_PRESIZE};CUZK_GPU_SPARE_CORE=${CUZK_GPU_SPARE_CORE};CUZK_GPU_G2=${CUZK_GPU_G2};CUZK_GPU_OVERLAP=${CUZK_GPU_OVERLAP};CUZK_CUDA=${CUZK_CUDA_ENABLED};CUZK_PAPI=${CUZK_PAPI_ENABLED};CUZK_NVTX=${CUZK_NVTX_ENABLED};CUZK_SANITIZE=${CUZK_SANITIZE};CUZK_TSAN=${CUZK_TSAN};CUZK_PORTABLE=${CUZK_PORTABLE}")
string(REPLACE ";" "," _flags_csv "${_flags}")
add_custom_target(cuzk_provenance_gen
  COMMAND ${CMAKE_COMMAND}
    -DSRC_DIR=${CMAKE_SOURCE_DIR}
    -DOUT=${CUZK_PROVENANCE_CPP}
    -DFLAGS=${_flags_csv}
    -DPRESET=${CUZK_PRESET_NAME}
    -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
    -DCOMPILER=${CMAKE_CXX_COMPILER_ID}
    -DCOMPILER_VERSION=${CMAKE_CXX_COMPILER_VERSION}
    -DNVCC_VERSION=${CUZK_NVCC_VERSION}
    -DCUDA_ARCHS=${CMAKE_CUDA_ARCHITECTURES}
    -DBUILD_DIR=${CMAKE_BINARY_DIR}
    -P ${CMAKE_SOURCE_DIR}/cmake/provenance_gen.cmake
  BYPRODUCTS ${CUZK_PROVENANCE_CPP}
  COMMENT "cuzk: provenance (source hash, git commit, variant flags)"
  VERBATIM)
add_library(cuzk_provenance STATIC ${CUZK_PROVENANCE_CPP})
add_dependencies(cuzk_provenance cuzk_provenance_gen)
target_include_directories(cuzk_provenance PUBLIC ${CMAKE_SOURCE_DIR})

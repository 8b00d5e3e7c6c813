// Host/device annotation: the arithmetic headers compile both in host C++ and under nvcc.
#pragma once
#if defined(__CUDACC__)
#define CUZK_HD __host__ __device__ __forceinline__
#define CUZK_HD_NOINLINE __host__ __device__
#define CUZK_DEVICE_CODE defined(__CUDA_ARCH__)
#else
#define CUZK_HD inline
#define CUZK_HD_NOINLINE
#endif

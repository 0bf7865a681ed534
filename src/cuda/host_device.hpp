// TI_HD: a function both the host (plain C++, the host executor and the tests) and the GPU compile.
#pragma once

#if defined(__CUDACC__)
#define TI_HD __host__ __device__
#else
#define TI_HD
#endif

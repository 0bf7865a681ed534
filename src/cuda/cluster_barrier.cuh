// The resident kernels' cluster operations, with a cluster of one block taken apart: its barrier
// is a block barrier and its "remote" shared memory its own. barrier.cluster costs the same for
// one block as for sixteen (0.18-0.20 us on the H200, docs/gpu.md), about ten times a block
// barrier, and a model small enough for one block pays it per layer and step; the branch is
// uniform across the cluster, so every thread takes the same side.
#pragma once

#include <cooperative_groups.h>

namespace tickinfer::cuda::detail {

// Orders shared and global memory across every thread of the cluster, as cluster.sync() does.
__device__ __forceinline__ void cluster_barrier(cooperative_groups::cluster_group& cluster) {
  if (cluster.num_blocks() == 1)
    __syncthreads();
  else
    cluster.sync();
}

// p in block q's shared memory (q = 0 and p itself in a cluster of one).
template <class T>
__device__ __forceinline__ T* shared_in_block(cooperative_groups::cluster_group& cluster, T* p, unsigned q) {
  return cluster.num_blocks() == 1 ? p : cluster.map_shared_rank(p, q);
}

}  // namespace tickinfer::cuda::detail

/**********************************************************************
Copyright © 2015 Advanced Micro Devices, Inc. All rights reserved.

(A test kernel written for GPUscope in the manner of the AMD APP SDK
samples, not taken from them: its notice is saved in Latin-1, as theirs
are, so the © above and the accents below are single bytes that are
not UTF-8: développé à l'essai, résumé ®, 5 µs.)
**********************************************************************/

// Transposes a width x height matrix through local memory, one
// BLOCK x BLOCK tile per work-group (café-sized tiles).
#define BLOCK 8

__kernel void matrixTranspose(__global float *output,
                              __global const float *input,
                              __local float *block,
                              const uint width,
                              const uint height)
{
    uint gx = get_global_id(0);
    uint gy = get_global_id(1);
    uint lx = get_local_id(0);
    uint ly = get_local_id(1);

    /* Read the tile row by row (coalesced), keep it in local memory. */
    block[ly * BLOCK + lx] = input[gy * width + gx];
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Write it back column by column: the tile's origin, transposed. */
    uint ox = get_group_id(1) * BLOCK + lx;
    uint oy = get_group_id(0) * BLOCK + ly;
    output[oy * height + ox] = block[lx * BLOCK + ly];
}

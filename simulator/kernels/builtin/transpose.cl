// Matrix transpose through local memory (AMD APP SDK style). The matrix is read as
// float4; each work-item moves one 4x4 block. A work-group stages a 16x16-block tile
// (16 KB) in local memory: rows are written with unit stride, then read transposed,
// which makes consecutive lanes hit the same banks (conflicts on the reads).
// Work-groups are visited in diagonal order to spread DRAM channel traffic.
kernel void transpose(global float4 *output, global const float4 *input, local float4 *block)
{
    uint wiWidth = get_global_size(0);
    uint blockSize = get_local_size(0);
    uint gix_t = get_group_id(0);
    uint giy_t = get_group_id(1);
    uint giy = gix_t;
    uint gix = (gix_t + giy_t) % get_num_groups(0);
    uint lix = get_local_id(0);
    uint liy = get_local_id(1);

    uint ix = gix * blockSize + lix;
    uint iy = giy * blockSize + liy;
    uint index_in = ix + iy * wiWidth * 4;
    uint ind = liy * blockSize * 4 + lix;
    block[ind] = input[index_in];
    block[ind + blockSize] = input[index_in + wiWidth];
    block[ind + blockSize * 2] = input[index_in + wiWidth * 2];
    block[ind + blockSize * 3] = input[index_in + wiWidth * 3];

    barrier(CLK_LOCAL_MEM_FENCE);

    ix = giy * blockSize + lix;
    iy = gix * blockSize + liy;
    uint index_out = ix + iy * wiWidth * 4;
    ind = lix * blockSize * 4 + liy;
    float4 v0 = block[ind];
    float4 v1 = block[ind + blockSize];
    float4 v2 = block[ind + blockSize * 2];
    float4 v3 = block[ind + blockSize * 3];
    output[index_out] = (float4)(v0.x, v1.x, v2.x, v3.x);
    output[index_out + wiWidth] = (float4)(v0.y, v1.y, v2.y, v3.y);
    output[index_out + wiWidth * 2] = (float4)(v0.z, v1.z, v2.z, v3.z);
    output[index_out + wiWidth * 3] = (float4)(v0.w, v1.w, v2.w, v3.w);
}

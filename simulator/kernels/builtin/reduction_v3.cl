// Parallel reduction, version 3 (Harris): sequential addressing, no divergence
// inside a wavefront until fewer than 64 lanes remain, and no bank conflicts.
kernel void reduce(global float *g_idata, global float *g_odata, int n, local float *sdata)
{
    @watch sdata;
    int tid = get_local_id(0);
    int i = get_global_id(0);
    if (i < n) {
        sdata[tid] = g_idata[i];
    } else {
        sdata[tid] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) / 2; s > 0; s = s / 2) {
        if (tid < s) {
            sdata[tid] = sdata[tid] + sdata[tid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tid == 0) {
        g_odata[get_group_id(0)] = sdata[0];
    }
}

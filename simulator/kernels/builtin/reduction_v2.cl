// Parallel reduction, version 2 (Harris): contiguous work-items but a strided
// index into local memory, which causes bank conflicts.
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
    for (int s = 1; s < get_local_size(0); s = s * 2) {
        int index = 2 * s * tid;
        if (index < get_local_size(0)) {
            sdata[index] = sdata[index] + sdata[index + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tid == 0) {
        g_odata[get_group_id(0)] = sdata[0];
    }
}

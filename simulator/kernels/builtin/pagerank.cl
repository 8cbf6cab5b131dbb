// One PageRank step, y = (1 - d) / N + d * M x, as a sparse matrix-vector product in
// CSR form with one wavefront per row (Hetero-Mark's kernel shape). The lanes of a
// wavefront stride through the row's non-zeros, gather x through the column indices,
// then reduce their partial sums in local memory. Rows are short in a power-law
// graph, so most lanes idle: low SIMD occupancy, many tiny work-groups.
kernel void pagerank(int num_rows, global const int *row_offsets, global const int *cols,
                     global const float *vals, global const float *x, global float *y,
                     local float *partial, float damping)
{
    int gid = get_global_id(0);
    int lid = get_local_id(0);
    int row = gid >> 6;
    int lane = gid & 63;
    partial[lid] = 0.0f;
    if (row < num_rows) {
        int start = row_offsets[row];
        int end = row_offsets[row + 1];
        for (int j = start + lane; j < end; j += 64) {
            partial[lid] += vals[j] * x[cols[j]];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 32; s > 0; s = s / 2) {
        if (lane < s) {
            partial[lid] += partial[lid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && row < num_rows) {
        y[row] = (1.0f - damping) / num_rows + damping * partial[lid];
    }
}

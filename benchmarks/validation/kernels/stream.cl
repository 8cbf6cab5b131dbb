// STREAM's four operations and a dot product on doubles, one element per work-item
// (dot: a strided loop per work-item, then a tree in local memory per work-group), the
// operations BabelStream times; written for GPUscope's validation file, ../r9nano.csv.
#define SCALAR 0.4

kernel void copy(global const double *a, global double *c)
{
    size_t i = get_global_id(0);
    c[i] = a[i];
}

kernel void mul(global double *b, global const double *c)
{
    size_t i = get_global_id(0);
    b[i] = SCALAR * c[i];
}

kernel void add(global const double *a, global const double *b, global double *c)
{
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}

kernel void triad(global double *a, global const double *b, global const double *c)
{
    size_t i = get_global_id(0);
    a[i] = b[i] + SCALAR * c[i];
}

// One partial sum per work-group in sums[]; the host adds them up.
kernel void dot(global const double *a, global const double *b, global double *sums,
                local double *part, int n)
{
    size_t lid = get_local_id(0);
    double sum = 0.0;
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0))
        sum += a[i] * b[i];
    part[lid] = sum;
    for (size_t half = get_local_size(0) / 2; half > 0; half /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < half)
            part[lid] += part[lid + half];
    }
    if (lid == 0)
        sums[get_group_id(0)] = part[0];
}

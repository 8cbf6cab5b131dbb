// Vector addition: the smoke test. One work-item per element; the tail of the last
// work-group is masked off by the bounds check.
kernel void vectoradd(global const float *a, global const float *b, global float *c, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

// Vector addition: the smoke test. One work-item per element; the tail of the last
// work-group is masked off by the bounds check.
kernel void vectoradd(global const float *a, global const float *b, global float *c, int n)
{
    // Each sum is also emitted and bound to a line chart: the kernel page's Debug view.
    @emit float sums[64];
    int i = get_global_id(0);
    if (i < n) {
        float sum = a[i] + b[i];
        c[i] = sum;
        sums = sum;
    }
}
@bind ["class":"lineChart", "data":["sums"]]

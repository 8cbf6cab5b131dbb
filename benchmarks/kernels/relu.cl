// Rectified linear unit, element-wise: the simplest bandwidth-bound kernel.
kernel void relu(global const float *in, global float *out, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        out[i] = fmax(in[i], 0.0f);
    }
}

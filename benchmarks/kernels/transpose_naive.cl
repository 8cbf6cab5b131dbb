// Naive matrix transpose: one work-item per element, no local memory. The reads are
// coalesced along a row; the writes stride by the matrix height, so every lane of a
// wavefront writes its own 64 B line (the case a tiled transpose exists to avoid).
kernel void transpose_naive(global const float *in, global float *out, int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < width && y < height) {
        out[x * height + y] = in[y * width + x];
    }
}

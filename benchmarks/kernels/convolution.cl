// 2-D convolution with a square mask read from a buffer (width given as an argument).
// Each work-item computes one output pixel; samples outside the image are clamped to
// its edge. Neighbouring work-items re-read the same input lines: a cache-friendly kernel.
kernel void convolve2d(global const float *in, global const float *mask, global float *out,
                       int width, int height, int mask_width)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height) {
        return;
    }
    int radius = mask_width / 2;
    float sum = 0.0f;
    for (int my = 0; my < mask_width; my++) {
        int sy = clamp(y + my - radius, 0, height - 1);
        for (int mx = 0; mx < mask_width; mx++) {
            int sx = clamp(x + mx - radius, 0, width - 1);
            sum += mask[my * mask_width + mx] * in[sy * width + sx];
        }
    }
    out[y * width + x] = sum;
}

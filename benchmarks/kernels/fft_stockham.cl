// One radix-2 stage of a Stockham FFT (out of place, complex numbers as float2): a
// launch per stage, span = 1, 2, 4, ..., n/2. Work-item j combines elements j and
// j + n/2 and writes them span apart in the output, so no bit reversal is needed.
kernel void fft_radix2_stage(global const float2 *src, global float2 *dst, int n, int span)
{
    int j = get_global_id(0);
    int half_n = n / 2;
    if (j >= half_n) {
        return;
    }
    int k = j % span;                       // position inside the current sub-transform
    float angle = -3.14159265358979f * (float)k / (float)span;
    float c = cos(angle);
    float s = sin(angle);
    float2 a = src[j];
    float2 b = src[j + half_n];
    float2 bt = (float2)(b.x * c - b.y * s, b.x * s + b.y * c);
    int out = (j - k) * 2 + k;
    dst[out] = a + bt;
    dst[out + span] = a - bt;
}

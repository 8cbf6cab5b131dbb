// Sobel edge filter (Klein's image-processing case study). Each work-group loads its
// tile plus a one-pixel apron into local memory; the work-items on the tile's edges
// load the apron, which is where the branches diverge. Pixels outside the image are
// clamped to the edge; the image's own border pixels are written as 0.
kernel void sobel(global const float *in, global float *out, int width, int height,
                  local float *tile)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    int lx = get_local_id(0);
    int ly = get_local_id(1);
    int lw = get_local_size(0);
    int lh = get_local_size(1);
    int tw = lw + 2;
    @watch tile;

    int left = max(x - 1, 0);
    int right = min(x + 1, width - 1);
    int up = max(y - 1, 0);
    int down = min(y + 1, height - 1);
    tile[(ly + 1) * tw + lx + 1] = in[y * width + x];
    if (lx == 0) {
        tile[(ly + 1) * tw] = in[y * width + left];
        if (ly == 0) {
            tile[0] = in[up * width + left];
        }
        if (ly == lh - 1) {
            tile[(lh + 1) * tw] = in[down * width + left];
        }
    }
    if (lx == lw - 1) {
        tile[(ly + 1) * tw + lw + 1] = in[y * width + right];
        if (ly == 0) {
            tile[lw + 1] = in[up * width + right];
        }
        if (ly == lh - 1) {
            tile[(lh + 1) * tw + lw + 1] = in[down * width + right];
        }
    }
    if (ly == 0) {
        tile[lx + 1] = in[up * width + x];
    }
    if (ly == lh - 1) {
        tile[(lh + 1) * tw + lx + 1] = in[down * width + x];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
        out[y * width + x] = 0.0f;
    } else {
        int c = (ly + 1) * tw + lx + 1;
        float gx = tile[c - tw + 1] + 2.0f * tile[c + 1] + tile[c + tw + 1]
                 - tile[c - tw - 1] - 2.0f * tile[c - 1] - tile[c + tw - 1];
        float gy = tile[c + tw - 1] + 2.0f * tile[c + tw] + tile[c + tw + 1]
                 - tile[c - tw - 1] - 2.0f * tile[c - tw] - tile[c - tw + 1];
        out[y * width + x] = sqrt(gx * gx + gy * gy);
    }
}

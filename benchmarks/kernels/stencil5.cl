// One Jacobi step of the 2-D Laplace equation: every interior point becomes the mean
// of its four neighbours; the boundary keeps its value.
kernel void jacobi5(global const float *u, global float *u_next, int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height) {
        return;
    }
    int i = y * width + x;
    if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
        u_next[i] = u[i];
    } else {
        u_next[i] = 0.25f * (u[i - 1] + u[i + 1] + u[i - width] + u[i + width]);
    }
}

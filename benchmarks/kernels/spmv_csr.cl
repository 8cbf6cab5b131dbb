// Sparse matrix-vector product y = A x, A in CSR form, the scalar kernel: one
// work-item per row. Rows of different lengths diverge the loop, and the gather
// x[col[j]] touches scattered lines.
kernel void spmv_csr_scalar(global const int *row_ptr, global const int *col,
                            global const float *val, global const float *x,
                            global float *y, int rows)
{
    int row = get_global_id(0);
    if (row < rows) {
        float sum = 0.0f;
        int end = row_ptr[row + 1];
        for (int j = row_ptr[row]; j < end; j++) {
            sum += val[j] * x[col[j]];
        }
        y[row] = sum;
    }
}

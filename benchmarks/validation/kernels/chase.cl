// A chain of dependent loads by one wavefront: each load's address needs the value the
// previous one returned, so they run one after another, each from DRAM when the steps
// are a cache line apart and the lines have not been read before.
// With next[i] = i (--arg next=range:N), step k reads next[STRIDE * k].
#define STRIDE 16   // uints: 64 B, one cache line

kernel void chase(global const uint *next, global uint *out, uint steps)
{
    uint at = 0;
    for (uint k = 0; k < steps; k++)
        at = next[at] + STRIDE;
    out[get_global_id(0)] = at;
}
